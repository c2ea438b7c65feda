import { describe, expect, it } from "vitest";
import { REDACTED, redactHeaders, redactSecret, redactSecretText } from "../src/redact.ts";

const SECRET = 'sk-live-"abc"/def+ghi';

describe("redactSecret", () => {
  it("replaces every spelling of the secret in a body, and returns the input untouched otherwise", () => {
    const body = Buffer.from(
      `{"echo":"Bearer ${JSON.stringify(SECRET).slice(1, -1)}","raw":"${SECRET}","q":"${encodeURIComponent(SECRET)}","again":"${SECRET}"}`,
    );
    const out = Buffer.from(redactSecret(body, SECRET)).toString();
    expect(out).not.toContain("sk-live");
    expect(out.split(REDACTED).length - 1).toBe(4);
    expect(out).toContain(`"echo":"Bearer ${REDACTED}"`);
    const clean = Buffer.from("nothing to see");
    expect(redactSecret(clean, SECRET)).toBe(clean);
    const u8 = new Uint8Array(Buffer.from(`x${SECRET}y`));
    expect(Buffer.from(redactSecret(u8, SECRET)).toString()).toBe(`x${REDACTED}y`);
  });

  it("redacts header maps, lists included, and strings", () => {
    const h = redactHeaders(
      {
        "x-echo": `Bearer ${SECRET}`,
        "set-cookie": ["a=1", `k=${encodeURIComponent(SECRET)}`],
        "content-length": 3,
      },
      SECRET,
    );
    expect(h).toEqual({
      "x-echo": `Bearer ${REDACTED}`,
      "set-cookie": ["a=1", `k=${REDACTED}`],
      "content-length": 3,
    });
    expect(redactSecretText(`a${SECRET}b${SECRET}`, SECRET)).toBe(`a${REDACTED}b${REDACTED}`);
  });
});
