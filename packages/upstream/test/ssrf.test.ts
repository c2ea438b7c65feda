import { describe, expect, it } from "vitest";
import { isBlockedIp, ssrfPolicy, validateUpstreamUrl } from "../src/ssrf.ts";

const strict = { policy: ssrfPolicy([]), allowHttp: true };
const check = (url: string, opts = strict) => {
  try {
    validateUpstreamUrl(url, opts);
    return "allowed";
  } catch {
    return "blocked";
  }
};

// Every URL a write may carry, with the verdict a careful operator expects. http is allowed here so
// that the address rules, not the scheme rule, decide.
const TABLE: Array<[string, "allowed" | "blocked"]> = [
  ["https://api.example.com/v1", "allowed"],
  ["https://example.com:8443/mcp", "allowed"],
  ["http://example.org", "allowed"],
  ["https://8.8.8.8/", "allowed"],
  ["https://1.1.1.1:443/x", "allowed"],
  ["https://[2606:4700:4700::1111]/", "allowed"],
  ["https://[2001:4860:4860::8888]/", "allowed"],
  ["https://xn--bcher-kva.example/", "allowed"],
  ["https://under_score.example.com/", "allowed"],
  ["https://172.32.0.1/", "allowed"],
  ["https://100.128.0.1/", "allowed"],
  ["https://[::ffff:8.8.8.8]/", "allowed"],
  ["http://127.0.0.1", "blocked"],
  ["http://127.1", "blocked"],
  ["http://127.0.1", "blocked"],
  ["http://0x7f000001", "blocked"],
  ["http://2130706433", "blocked"],
  ["http://017700000001", "blocked"],
  ["http://0x7f.0.0.1", "blocked"],
  ["http://0177.0.0.1", "blocked"],
  ["http://localhost", "blocked"],
  ["http://LOCALHOST.", "blocked"],
  ["http://api.localhost", "blocked"],
  ["http://0.0.0.0", "blocked"],
  ["http://0", "blocked"],
  ["http://10.0.0.1", "blocked"],
  ["http://10.255.255.255", "blocked"],
  ["http://172.16.0.1", "blocked"],
  ["http://172.31.255.254", "blocked"],
  ["http://192.168.1.1", "blocked"],
  ["http://169.254.169.254/latest/meta-data/", "blocked"],
  ["http://100.64.0.1", "blocked"],
  ["http://100.127.255.255", "blocked"],
  ["http://192.0.2.1", "blocked"],
  ["http://198.18.0.1", "blocked"],
  ["http://198.51.100.7", "blocked"],
  ["http://203.0.113.9", "blocked"],
  ["http://224.0.0.1", "blocked"],
  ["http://239.255.255.250", "blocked"],
  ["http://240.0.0.1", "blocked"],
  ["http://255.255.255.255", "blocked"],
  ["http://[::1]", "blocked"],
  ["http://[::]", "blocked"],
  ["http://[0:0:0:0:0:0:0:1]", "blocked"],
  ["http://[::ffff:127.0.0.1]", "blocked"],
  ["http://[::ffff:7f00:1]", "blocked"],
  ["http://[::ffff:169.254.169.254]", "blocked"],
  ["http://[::127.0.0.1]", "blocked"],
  ["http://[64:ff9b::7f00:1]", "blocked"],
  ["http://[2002:7f00:1::]", "blocked"],
  ["http://[2001:0::1]", "blocked"],
  ["http://[2001:db8::1]", "blocked"],
  ["http://[fd00::1]", "blocked"],
  ["http://[fc00::abcd]", "blocked"],
  ["http://[fe80::1]", "blocked"],
  ["http://[fec0::1]", "blocked"],
  ["http://[ff02::1]", "blocked"],
  ["http://[100::1]", "blocked"],
  ["file:///etc/passwd", "blocked"],
  ["gopher://example.com/", "blocked"],
  ["ftp://example.com/", "blocked"],
  ["javascript:alert(1)", "blocked"],
  ["https://user:pass@example.com", "blocked"],
  ["https://user@example.com", "blocked"],
  ["not a url", "blocked"],
  ["//example.com/relative", "blocked"],
  ["https://exa mple.com", "blocked"],
  // Port 0 and every IPv6 form that embeds a blocked IPv4 address.
  ["https://example.com:0/", "blocked"],
  ["https://8.8.8.8:0/", "blocked"],
  ["http://[::ffff:0:0]", "blocked"],
  ["http://[::ffff:0:7f00:1]", "blocked"], // IPv4-translated (SIIT) 127.0.0.1
  ["http://[::ffff:0:a00:1]", "blocked"],
  ["http://[::ffff:0:0:7f00:1]", "blocked"], // reserved ::/8, not global unicast
  ["http://[64:ff9b::a00:1]", "blocked"],
  ["http://[64:ff9b::a9fe:a9fe]", "blocked"],
  ["http://[64:ff9b:1::1]", "blocked"],
  ["http://[2002:a00:1::]", "blocked"],
  ["http://[2002:c0a8:101::1]", "blocked"],
  ["http://[::a00:1]", "blocked"], // IPv4-compatible
  ["http://[2001:0:4136:e378:8000:63bf:80ff:fffe]", "blocked"], // Teredo
  ["http://[1::1]", "blocked"], // outside 2000::/3
  ["http://[4000::1]", "blocked"],
  ["https://[64:ff9b::808:808]/", "allowed"],
  ["https://[2002:808:808::1]/", "allowed"],
  ["https://[::ffff:0:808:808]/", "allowed"],
  ["https://example.com:65535/", "allowed"],
];

describe("write-time SSRF validation", () => {
  it("has a table of at least 40 cases", () => expect(TABLE.length).toBeGreaterThanOrEqual(40));

  it.each(TABLE)("%s → %s", (url, verdict) => {
    expect(check(url)).toBe(verdict);
  });

  it("refuses http unless allowed", () => {
    expect(check("http://example.com", { policy: ssrfPolicy([]), allowHttp: false })).toBe("blocked");
    expect(check("https://example.com", { policy: ssrfPolicy([]), allowHttp: false })).toBe("allowed");
  });

  it("exempts configured CIDRs, in both spellings of the same address", () => {
    const opts = { policy: ssrfPolicy(["127.0.0.0/8"]), allowHttp: true };
    expect(check("http://127.0.0.1:9000", opts)).toBe("allowed");
    expect(check("http://[::ffff:127.0.0.1]:9000", opts)).toBe("allowed");
    expect(check("http://10.0.0.1", opts)).toBe("blocked");
    // localhost stays refused: the exemption is for addresses, not for the name.
    expect(check("http://localhost:9000", opts)).toBe("blocked");
  });

  it("gives a caller-safe message naming the field", () => {
    expect(() => validateUpstreamUrl("http://10.0.0.1", strict)).toThrow("upstream_url host is not allowed");
    expect(() => validateUpstreamUrl("x", { ...strict, field: "facilitator_url" })).toThrow(
      /^facilitator_url/,
    );
  });

  it("advises on a local host only what is still missing: the address for a name, the variable for a blocked address", () => {
    const message = (url: string, opts: Parameters<typeof validateUpstreamUrl>[1]) => {
      try {
        validateUpstreamUrl(url, opts);
      } catch (e) {
        return (e as Error).message;
      }
      return "accepted";
    };
    const local = { policy: ssrfPolicy(["127.0.0.1/32"]), allowHttp: true };
    expect(message("http://localhost:9000/a?key=k", local)).toBe(
      "upstream_url host is not allowed (localhost names are always refused: use the address instead, http://127.0.0.1:9000/…)",
    );
    expect(message("http://127.0.0.1:9000/a", local)).toBe("accepted");
    expect(message("https://api.localhost/", strict)).toBe(
      "upstream_url host is not allowed (localhost names are always refused: use the address, https://127.0.0.1/…, and in development allow it with GW_SSRF_ALLOW_CIDRS=127.0.0.1/32)",
    );
    // http:// is refused first, with its own variable; an address once http is allowed, with the other.
    expect(message("http://10.0.0.1/", { ...strict, allowHttp: false })).toBe(
      "upstream_url must use https (in development, GW_ALLOW_HTTP_UPSTREAMS=true allows http)",
    );
    expect(message("http://10.0.0.1/", local)).toBe(
      "upstream_url host is not allowed (a local or private address; in development allow it with GW_SSRF_ALLOW_CIDRS, e.g. 127.0.0.1/32)",
    );
  });

  it("rejects malformed CIDRs in the allow list", () => {
    expect(() => ssrfPolicy(["10.0.0.0/33"])).toThrow();
    expect(() => ssrfPolicy(["nope/8"])).toThrow();
  });
});

describe("dial-time address classification", () => {
  it.each([
    ["127.0.0.1", true],
    ["::1", true],
    ["::ffff:10.1.2.3", true],
    ["fe80::1%eth0", true],
    ["93.184.216.34", false],
    ["2606:4700::1", false],
    ["not-an-ip", true],
    ["::ffff:0:0", true],
    ["::ffff:0:7f00:1", true],
    ["64:ff9b::7f00:1", true],
    ["2002:7f00:1::1", true],
    ["64:ff9b::808:808", false],
    ["fd12::1", true],
  ])("%s blocked=%s", (ip, blocked) => {
    expect(isBlockedIp(ip, ssrfPolicy([]))).toBe(blocked);
  });
});
