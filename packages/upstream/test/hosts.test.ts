import { describe, expect, it } from "vitest";
import { hostMatches, normalizeHostPattern } from "../src/hosts.ts";

describe("allowed_hosts patterns", () => {
  it.each([
    ["api.example.com", "api.example.com"],
    ["API.Example.COM.", "api.example.com"],
    ["*.example.com", "*.example.com"],
    ["127.0.0.1", "127.0.0.1"],
    ["[::1]", "[::1]"],
    ["bücher.example", "xn--bcher-kva.example"],
  ])("normalizes %s → %s", (raw, out) => {
    expect(normalizeHostPattern(raw)).toBe(out);
  });

  it.each([
    "",
    "*",
    "*.com",
    "*.1.2.3.4",
    "*.[::1]",
    "a b",
    "host:443",
    "a/b",
    "user@host",
    "*.*.x.com",
    "http://x",
  ])("refuses %j", (raw) => {
    expect(normalizeHostPattern(raw)).toBeUndefined();
  });

  it("matches exact hosts and wildcard subdomains only", () => {
    const p = ["api.example.com", "*.svc.example.org", "127.0.0.1"];
    expect(hostMatches("api.example.com", p)).toBe(true);
    expect(hostMatches("API.EXAMPLE.COM", p)).toBe(true);
    expect(hostMatches("a.svc.example.org", p)).toBe(true);
    expect(hostMatches("a.b.svc.example.org", p)).toBe(true);
    expect(hostMatches("svc.example.org", p)).toBe(false);
    expect(hostMatches("evilsvc.example.org", p)).toBe(false);
    expect(hostMatches("api.example.com.evil.test", p)).toBe(false);
    expect(hostMatches("example.com", p)).toBe(false);
    expect(hostMatches("127.0.0.1", p)).toBe(true);
    expect(hostMatches("127.0.0.2", p)).toBe(false);
  });
});
