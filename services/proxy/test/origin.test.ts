// @stores once: the Origin check, decided before the store.
import { recordDone, type TestApp, type Upstream } from "@gw/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Caller, caller, createAgent, pollDone, startGateway, upstreamPool } from "./helpers.ts";

// The Origin check (docs/security.md, Origin check; DNS rebinding): on both proxy paths of an MCP
// agent, an Origin header that names neither GW_PUBLIC_URL's origin nor one of GW_ALLOWED_ORIGINS
// is refused 403 before the rate limit, with nothing created, charged or forwarded.
const PUBLIC = "https://gw.example.com/base";
const LISTED = "http://localhost:3000, https://app.example";

let gw: TestApp;
let call: Caller;
let upstream: Upstream;
const pool = upstreamPool();

const PING = { jsonrpc: "2.0", id: 1, method: "ping" };
const REFUSED = [
  "http://evil.example",
  "https://gw.example.com:8443",
  "http://gw.example.com",
  "null",
  "http://localhost:3001",
  // Malformed, or more than an origin.
  "",
  "not an origin",
  "https://app.example/path",
  "https://user@app.example",
  "http://evil.example, https://app.example",
];

beforeAll(async () => {
  gw = await startGateway({ GW_PUBLIC_URL: PUBLIC, GW_ALLOWED_ORIGINS: LISTED });
  call = await caller(gw);
  upstream = await pool.up((req, res) => {
    if (req.method === "GET") {
      res.writeHead(200, { "content-type": "text/event-stream" }).end();
    } else if (req.method === "DELETE") {
      res.writeHead(204).end();
    } else {
      res.writeHead(200, { "content-type": "application/json" }).end('{"jsonrpc":"2.0","id":1,"result":{}}');
    }
  });
});
afterAll(async () => {
  await gw?.close();
  await pool.closeAll();
});

function mcpAgent(extra: Record<string, unknown> = {}): Promise<string> {
  return createAgent(call, { upstream_url: `${upstream.url}/mcp`, protocol: "mcp", ...extra });
}

/** One call with an Origin header (or none); POST carries a JSON-RPC ping. */
function send(method: string, path: string, origin: string | undefined) {
  return call(method, path, method === "POST" ? PING : undefined, origin === undefined ? {} : { origin });
}

async function invocationsOf(agentId: string): Promise<number> {
  const res = await call("GET", `/v1/invocations?agent_id=${agentId}`);
  expect(res.status).toBe(200);
  return res.json.total as number;
}

describe("an MCP agent", () => {
  it("refuses an Origin that is not allowed on every path and method: 403, nothing created or forwarded", async () => {
    const agent = await mcpAgent();
    const hits = upstream.received.length;
    const paths: Array<[string, string]> = [
      ["POST", `/v1/proxy/${agent}`],
      ["POST", `/v1/proxy/${agent}/stream`],
      ["GET", `/v1/proxy/${agent}/stream`],
      ["DELETE", `/v1/proxy/${agent}/stream`],
    ];
    for (const [method, path] of paths) {
      for (const origin of REFUSED) {
        const res = await send(method, path, origin);
        expect(res.status, `${method} ${path} Origin: ${JSON.stringify(origin)}`).toBe(403);
        expect(res.json).toEqual({ error: "origin not allowed" });
        expect(res.headers.get("x-gateway-invocation-id")).toBeNull();
      }
    }
    // One call that is let through, recorded: the refused ones left no record before it.
    const ok = await send("POST", `/v1/proxy/${agent}/stream`, undefined);
    expect(ok.status).toBe(200);
    await recordDone(call, ok.headers.get("x-gateway-invocation-id") as string);
    expect(await invocationsOf(agent)).toBe(1);
    expect(upstream.received.length).toBe(hits + 1);
  });

  it("lets through GW_PUBLIC_URL's origin, a listed one (normalised), and no Origin at all", async () => {
    const agent = await mcpAgent();
    const allowed = [
      undefined,
      "https://gw.example.com",
      "HTTPS://GW.EXAMPLE.COM:443",
      "http://localhost:3000",
      "https://app.example",
      "https://App.Example",
    ];
    for (const origin of allowed) {
      const streamed = await send("POST", `/v1/proxy/${agent}/stream`, origin);
      expect(streamed.status, `stream, Origin: ${origin}`).toBe(200);
      expect(streamed.json).toEqual({ jsonrpc: "2.0", id: 1, result: {} });
      const accepted = await send("POST", `/v1/proxy/${agent}`, origin);
      expect(accepted.status, `transactional, Origin: ${origin}`).toBe(202);
      const done = await pollDone(call, agent, accepted.json.invocation_id);
      expect(done.json.status).toBe("succeeded");
    }
    for (const method of ["GET", "DELETE"]) {
      const res = await send(method, `/v1/proxy/${agent}/stream`, "https://app.example");
      expect(res.status, method).toBe(method === "GET" ? 200 : 204);
    }
  });

  it("is checked before the rate limit: a refused call charges no bucket, and an empty bucket still says 403", async () => {
    const agent = await mcpAgent({ rate_limit: { rps: 0.001, burst: 1 } });
    for (let i = 0; i < 5; i++) {
      expect((await send("POST", `/v1/proxy/${agent}/stream`, "http://evil.example")).status).toBe(403);
    }
    // The one token of the bucket is still there...
    expect((await send("POST", `/v1/proxy/${agent}/stream`, "https://app.example")).status).toBe(200);
    // ...and now gone: a listed origin is limited, a refused one is refused first.
    expect((await send("POST", `/v1/proxy/${agent}/stream`, "https://app.example")).status).toBe(429);
    const refused = await send("POST", `/v1/proxy/${agent}/stream`, "http://evil.example");
    expect(refused.status).toBe(403);
    expect(refused.json).toEqual({ error: "origin not allowed" });
  });
});

describe("an http agent", () => {
  it("is not checked: any Origin is forwarded like any other header", async () => {
    const agent = await createAgent(call, { upstream_url: `${upstream.url}/plain` });
    for (const origin of ["http://evil.example", "null", "not an origin"]) {
      const res = await send("POST", `/v1/proxy/${agent}/stream`, origin);
      expect(res.status, origin).toBe(200);
      expect(upstream.received.at(-1)?.headers.origin).toBe(origin);
      const accepted = await send("POST", `/v1/proxy/${agent}`, origin);
      expect(accepted.status, origin).toBe(202);
    }
  });
});
