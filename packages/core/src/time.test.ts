import { describe, expect, it } from "vitest";
import { boundedWindow, parseRfc3339 } from "./time.ts";

describe("parseRfc3339", () => {
  it("parses UTC, offsets and fractions", () => {
    expect(parseRfc3339("2024-02-29T12:34:56Z")?.toISOString()).toBe("2024-02-29T12:34:56.000Z");
    expect(parseRfc3339("2024-01-01T01:00:00+01:00")?.toISOString()).toBe("2024-01-01T00:00:00.000Z");
    expect(parseRfc3339("2024-01-01t00:00:00.123456-00:30")?.toISOString()).toBe("2024-01-01T00:30:00.123Z");
    expect(parseRfc3339("0001-01-01T00:00:00Z")?.toISOString()).toBe("0001-01-01T00:00:00.000Z");
    expect(parseRfc3339("9999-12-31T23:59:59.999Z")?.toISOString()).toBe("9999-12-31T23:59:59.999Z");
  });

  it.each([
    "0000-01-01T00:00:00Z",
    "2023-02-29T00:00:00Z",
    "2024-02-30T00:00:00Z",
    "2024-13-01T00:00:00Z",
    "2024-01-01T24:00:00Z",
    "2024-01-01T23:59:60Z",
    "2024-01-01T00:00:00+24:00",
    "2024-01-01",
    "2024-01-01T00:00:00",
    "+010000-01-01T00:00:00Z",
    "2024-01-01T00:00:00Z\u0000",
    "",
  ])("refuses %j", (s) => {
    expect(parseRfc3339(s)).toBeUndefined();
  });
});

describe("boundedWindow", () => {
  const now = new Date("2024-06-01T00:00:00Z");
  it("defaults to the last 24 hours and keeps given bounds", () => {
    expect(boundedWindow({}, 31, now)).toEqual({ since: new Date("2024-05-31T00:00:00Z"), until: now });
    const until = new Date("2024-05-10T00:00:00Z");
    expect(boundedWindow({ until }, 31, now).since).toEqual(new Date("2024-05-09T00:00:00Z"));
  });
  it("accepts exactly the maximum and refuses one millisecond more or a reversed window", () => {
    const since = new Date("2024-05-01T00:00:00Z");
    expect(boundedWindow({ since, until: new Date("2024-06-01T00:00:00Z") }, 31, now).since).toBe(since);
    expect(() => boundedWindow({ since, until: new Date("2024-06-01T00:00:00.001Z") }, 31, now)).toThrow(
      /31 days/,
    );
    expect(() => boundedWindow({ since: now, until: since }, 31, now)).toThrow(/since/);
  });
});
