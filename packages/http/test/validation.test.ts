import { DomainError } from "@gw/core";
import * as v from "valibot";
import { describe, expect, it } from "vitest";
import { assertNoNul, parseTimestamp, Timestamp, textParam, timeParam } from "../src/index.ts";

const messageOf = (f: () => unknown) => {
  try {
    f();
  } catch (e) {
    if (e instanceof DomainError) return `${e.kind}: ${e.message}`;
    throw e;
  }
  return "ok";
};

describe("the NUL rule", () => {
  it("names the field, however deep, for values and keys", () => {
    expect(messageOf(() => assertNoNul({ name: "a\u0000" }))).toBe(
      "invalid: name: must not contain NUL characters",
    );
    expect(messageOf(() => assertNoNul({ price: { tools: { "x\u0000": "1" } } }))).toBe(
      "invalid: price.tools: field names must not contain NUL characters",
    );
    expect(messageOf(() => assertNoNul({ a: [1, "ok", { b: "\u0000" }] }))).toBe(
      "invalid: a.2.b: must not contain NUL characters",
    );
    expect(messageOf(() => assertNoNul("\u0000"))).toBe(
      "invalid: request body: must not contain NUL characters",
    );
    expect(messageOf(() => assertNoNul({ "\u0000": 1 }))).toBe(
      "invalid: request body: field names must not contain NUL characters",
    );
    expect(messageOf(() => assertNoNul({ ok: "fine", n: 1, b: null, list: ["é", "\u0001"] }))).toBe("ok");
  });

  it("walks a deeply nested value without overflowing the stack", () => {
    const deep = JSON.parse(`${"[".repeat(200_000)}"\\u0000"${"]".repeat(200_000)}`);
    expect(messageOf(() => assertNoNul(deep))).toMatch(/^invalid: 0\.0\.0/);
  });

  it("applies to free-text query parameters", () => {
    expect(messageOf(() => textParam("\u0000", "agent_id"))).toBe(
      "invalid: agent_id must not contain NUL characters",
    );
    expect(messageOf(() => textParam("x".repeat(300), "agent_id"))).toMatch(/at most 256 bytes/);
    expect(textParam(undefined, "agent_id")).toBeUndefined();
  });
});

describe("the timestamp rule", () => {
  it.each([
    "2026-01-02T03:04:05Z",
    "2026-01-02t03:04:05.123456789z",
    "2024-02-29T00:00:00+01:00",
    "0001-01-01T00:00:00Z",
    "9999-12-31T23:59:59Z",
    "2026-01-02 03:04:05-07:30",
  ])("accepts %s", (raw) => {
    expect(parseTimestamp(raw)).toBeInstanceOf(Date);
  });

  it.each([
    "0000-01-01T00:00:00Z",
    "0001-01-01T00:00:00+01:00",
    "9999-12-31T23:59:59-01:00",
    "10000-01-01T00:00:00Z",
    "2023-02-29T00:00:00Z",
    "2026-02-30T00:00:00Z",
    "2026-04-31T00:00:00Z",
    "2026-13-01T00:00:00Z",
    "2026-00-10T00:00:00Z",
    "2026-01-00T00:00:00Z",
    "2026-01-01T24:00:00Z",
    "2026-01-01T23:60:00Z",
    "2026-01-01T23:59:60Z",
    "2026-01-01T00:00:00+24:00",
    "2026-01-01T00:00:00",
    "2026-01-01",
    "yesterday",
    "2026-01-01T00:00:00Z\u0000",
    "+002026-01-01T00:00:00Z",
  ])("refuses %s", (raw) => {
    expect(parseTimestamp(raw)).toBeUndefined();
    expect(messageOf(() => timeParam(raw, "since"))).toMatch(/^invalid: since must be an RFC 3339/);
  });

  it("is a valibot schema for bodies", () => {
    expect(v.parse(Timestamp, "2026-01-02T03:04:05Z")).toEqual(new Date("2026-01-02T03:04:05Z"));
    expect(v.safeParse(Timestamp, "0000-01-01T00:00:00Z").success).toBe(false);
  });
});
