import { describe, expect, it } from "vitest";
import { bytesText, LIMITS } from "./limits.ts";

describe("bytesText", () => {
  it("writes each limit the way a 413 names it", () => {
    expect(bytesText(LIMITS.transactMaxBodyBytes)).toBe("32 MiB");
    expect(bytesText(LIMITS.jsonBodyMaxBytes)).toBe("256 KiB");
    expect(bytesText(LIMITS.agentEventMaxBytes)).toBe("32 KiB");
    expect(bytesText(LIMITS.bundleMaxBytes)).toBe("1 MiB");
    expect(bytesText(1536)).toBe("1536 bytes");
    expect(bytesText(300)).toBe("300 bytes");
  });
});
