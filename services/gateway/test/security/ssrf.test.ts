// @stores once: write-time SSRF validation, decided before the store.
import type { TestApp } from "@gw/testkit";
import { type Recorded, recordingCaller, sweepSecrets, Tally } from "@gw/testkit/sweep";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Caller, createAgent, startGateway } from "../helpers.ts";

// SSRF: the write-time corpus through POST and PATCH of agents on a production-like deployment
// (https only, no exempted ranges). The dial-time guard and redirects are the data plane's:
// services/proxy/test/ssrf-dial.test.ts.

const V4_TARGETS: Array<[string, number]> = [
  ["127.0.0.1", 0x7f000001],
  ["10.0.0.1", 0x0a000001],
  ["169.254.169.254", 0xa9fea9fe],
  ["192.168.1.1", 0xc0a80101],
  ["172.16.0.1", 0xac100001],
  ["100.64.0.1", 0x64400001],
  ["0.0.0.0", 0],
];

/** Every spelling the WHATWG URL parser turns into the same IPv4 address. */
function spellings([dotted, n]: [string, number]): string[] {
  const [a, b, c, d] = dotted.split(".").map(Number) as [number, number, number, number];
  const oct = (x: number) => `0${x.toString(8)}`;
  const hex = (x: number) => `0x${x.toString(16)}`;
  return [
    dotted,
    `${dotted}.`,
    String(n),
    `0x${n.toString(16)}`,
    `0X${n.toString(16).toUpperCase()}`,
    `0${n.toString(8)}`,
    [a, b, c, d].map(hex).join("."),
    [a, b, c, d].map(oct).join("."),
    `${a}.${(b << 16) | (c << 8) | d}`,
    `${a}.${b}.${(c << 8) | d}`,
    `${hex(a)}.${oct(b)}.${c}.${d}`,
    `${"0".repeat(5)}${a.toString(8)}.${b}.${c}.${d}`,
    [a, b, c, d].map((x) => encodeURIComponent(String(x)).replace(/\d/g, (ch) => `%3${ch}`)).join("."),
    [a, b, c, d]
      .map((x) => String(x).replace(/\d/g, (ch) => String.fromCharCode(0xff10 + Number(ch))))
      .join("。"),
  ];
}

const BLOCKED: string[] = [
  ...V4_TARGETS.flatMap((t) => spellings(t).map((h) => `https://${h}/`)),
  // IPv6, and every form that embeds a blocked IPv4 address
  ...[
    "::1",
    "::",
    "0:0:0:0:0:0:0:1",
    "0000:0000:0000:0000:0000:0000:0000:0001",
    "::ffff:127.0.0.1",
    "::ffff:7f00:1",
    "::FFFF:7F00:0001",
    "0:0:0:0:0:ffff:127.0.0.1",
    "::ffff:169.254.169.254",
    "::ffff:a9fe:a9fe",
    "::ffff:10.0.0.1",
    "::ffff:0:0",
    "::ffff:0:7f00:1",
    "::ffff:0:a9fe:a9fe",
    "64:ff9b::7f00:1",
    "64:ff9b::169.254.169.254",
    "64:ff9b::a00:1",
    "64:ff9b:1::1",
    "2002:7f00:1::",
    "2002:a9fe:a9fe::1",
    "2002:c0a8:101::",
    "::127.0.0.1",
    "::a9fe:a9fe",
    "2001:0:4136:e378:8000:63bf:80ff:fffe",
    "2001:db8::1",
    "fe80::1",
    "fc00::1",
    "fd00:ec2::254",
    "fec0::1",
    "ff02::1",
    "100::1",
    "1::1",
  ].map((h) => `https://[${h}]/`),
  // Names that always mean this machine
  "https://localhost/",
  "https://LOCALHOST/",
  "https://localhost./",
  "https://api.localhost/",
  "https://localhost.localdomain/",
  // Userinfo in any position
  "https://user:pass@example.com/",
  "https://user@example.com/",
  "https://example.com@127.0.0.1/",
  "https://user:@example.com/",
  "https://%40@example.com/",
  // Ports
  "https://example.com:0/",
  "https://8.8.8.8:0/",
  "https://example.com:65536/",
  "https://example.com:-1/",
  "https://example.com:99999999999/",
  // Schemes
  "http://example.com/",
  "file:///etc/passwd",
  "gopher://example.com/",
  "ftp://example.com/",
  "ws://example.com/",
  "wss://example.com/",
  "dict://example.com:11211/",
  "ldap://example.com/",
  "data:text/plain,hi",
  "javascript:alert(1)",
  "jar:https://example.com!/",
  // Malformed
  "",
  "not a url",
  "//example.com/",
  "https://",
  "https://exa mple.com/",
  "https://example.com\u0000/",
  "https://[::1/",
  "https://[fe80::1%25eth0]/",
];

const ALLOWED = [
  "https://example.com/",
  "https://api.example.com:8443/v1?x=1",
  "https://8.8.8.8/",
  "https://[2606:4700:4700::1111]/",
  "https://[::ffff:8.8.8.8]/",
  "https://[64:ff9b::808:808]/",
  "https://[2002:808:808::1]/",
  "https://xn--bcher-kva.example/",
];

const seen: Recorded[] = [];
const tally = new Tally();
let strict: TestApp;
let call: Caller;

beforeAll(async () => {
  strict = await startGateway({ GW_SSRF_ALLOW_CIDRS: "", GW_ALLOW_HTTP_UPSTREAMS: "false" });
  call = await recordingCaller(strict, seen, { scopes: [] });
});
afterAll(async () => {
  tally.print("SSRF corpus (400 expected for every blocked URL, 201/200 for the controls)");
  if (strict) await sweepSecrets(strict, seen, []);
  await strict?.close();
});

describe("write-time SSRF corpus", () => {
  it("holds at least 100 URLs that must be refused", () => {
    expect(new Set(BLOCKED).size).toBeGreaterThanOrEqual(100);
  });

  it("refuses every one through POST and PATCH, and leaves the agent as it was", async () => {
    const agentId = await createAgent(call, { upstream_url: "https://example.com/ok" });
    const failures: string[] = [];
    for (const url of BLOCKED) {
      const post = await call("POST", "/v1/agents", { name: "ssrf", upstream_url: url });
      tally.add("POST /v1/agents", post.status === 400);
      if (post.status !== 400 || typeof post.json?.error !== "string")
        failures.push(`POST ${JSON.stringify(url)} → ${post.status}`);
      const patch = await call("PATCH", `/v1/agents/${agentId}`, { upstream_url: url });
      tally.add("PATCH /v1/agents/{id}", patch.status === 400);
      if (patch.status !== 400) failures.push(`PATCH ${JSON.stringify(url)} → ${patch.status}`);
    }
    expect(failures).toEqual([]);
    const after = await call("GET", `/v1/agents/${agentId}`);
    expect(after.json.upstream_url).toBe("https://example.com/ok");
    // No agent was created by any refused POST.
    const list = await call("GET", "/v1/agents?limit=100");
    expect(list.json.total).toBe(1);
  });

  it("tells a caller who named localhost to use the address, and, with loopback not allowed, the variable that allows it", async () => {
    const named = await call("POST", "/v1/agents", {
      name: "local",
      upstream_url: "https://localhost:8443/v1?api_key=not-repeated",
    });
    expect(named.status).toBe(400);
    expect(named.json.error).toBe(
      "upstream_url host is not allowed (localhost names are always refused: use the address, https://127.0.0.1:8443/…, and in development allow it with GW_SSRF_ALLOW_CIDRS=127.0.0.1/32)",
    );
  });

  it("accepts the public controls (the corpus is not refusing everything)", async () => {
    const agentId = await createAgent(call, {});
    for (const url of ALLOWED) {
      const post = await call("POST", "/v1/agents", { name: "ok", upstream_url: url });
      tally.add("controls accepted (refused = wrong)", post.status !== 201);
      expect(post.status, url).toBe(201);
      const patch = await call("PATCH", `/v1/agents/${agentId}`, { upstream_url: url });
      expect(patch.status, url).toBe(200);
    }
  });
});
