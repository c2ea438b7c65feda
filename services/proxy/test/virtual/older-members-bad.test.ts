// @stores once: the MCP protocol through a virtual server.
import { startMcpV1Server, startUpstream, type TestApp, type Upstream } from "@gw/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Caller, caller, recordDone, startGateway } from "../helpers.ts";
import { memberAgent, memberPool, rpc, stream, virtualAgent } from "./fixture.ts";

// Older members that do not behave (docs/mcp.md, Older revisions): one that never answers
// initialize, one that answers it with garbage, one that drops its session at every call. Each
// call ends, bounded, with an answer that says what happened; the good member still serves.

let gw: TestApp;
let call: Caller;
const pool = memberPool();
let silent: Upstream;
let dropper: Upstream;
let v: string;
let session: string;
let garbageId: string;
const OLD = { "content-type": "application/json", accept: "application/json, text/event-stream" };

/** A member that says it is not of 2026-07-28 (400 to server/discover), then behaves as `rest` says. */
async function older(rest: (method: string, id: unknown, res: import("node:http").ServerResponse) => void) {
  const u = await startUpstream((_req, res, body) => {
    const msg = JSON.parse(body.toString() || "{}") as { method?: string; id?: unknown };
    if (msg.method === "server/discover") {
      res.writeHead(400, { "content-type": "application/json" });
      res.end(JSON.stringify({ jsonrpc: "2.0", id: null, error: { code: -32000, message: "Bad Request" } }));
      return;
    }
    rest(msg.method ?? "", msg.id, res);
  });
  pool.add(u);
  return u;
}

const posts = (u: Upstream, method: string) =>
  u.received.filter((r) => JSON.parse(r.body.toString() || "{}").method === method).length;

beforeAll(async () => {
  gw = await startGateway({ GW_TRANSACT_TIMEOUT_MS: "1500", GW_STREAM_FIRST_BYTE_TIMEOUT_MS: "1500" });
  call = await caller(gw);
  const good = await startMcpV1Server({ name: "good", mode: "stateless" });
  pool.add(good);
  silent = await older(() => {}); // initialize is never answered
  const garbage = await older((_m, _id, res) => {
    res.writeHead(200, { "content-type": "application/json" });
    res.end("<html>definitely not JSON-RPC</html>");
  });
  dropper = await older((method, id, res) => {
    if (method === "initialize") {
      res.writeHead(200, { "content-type": "application/json", "mcp-session-id": `s-${Math.random()}` });
      res.end(
        JSON.stringify({
          jsonrpc: "2.0",
          id,
          result: {
            protocolVersion: "2025-06-18",
            capabilities: { tools: {} },
            serverInfo: { name: "dropper", version: "1" },
          },
        }),
      );
    } else if (method === "notifications/initialized") res.writeHead(202).end();
    else {
      res.writeHead(404, { "content-type": "application/json" });
      res.end(
        JSON.stringify({ jsonrpc: "2.0", id: null, error: { code: -32001, message: "Session not found" } }),
      );
    }
  });
  garbageId = await memberAgent(call, garbage.url);
  const members = [
    { agent_id: await memberAgent(call, good.url), prefix: "good" },
    { agent_id: await memberAgent(call, silent.url), prefix: "silent" },
    { agent_id: garbageId, prefix: "garbage" },
    { agent_id: await memberAgent(call, dropper.url), prefix: "dropper" },
  ];
  v = await virtualAgent(call, members, { rate_limit: { rps: 100_000, burst: 100_000 } });
  const init = await call(
    "POST",
    `/v1/proxy/${v}/stream`,
    {
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "raw", version: "1" } },
    },
    OLD,
  );
  session = init.headers.get("mcp-session-id") as string;
});
afterAll(async () => {
  await pool.closeAll();
  await gw?.close();
});

function oldCall(method: string, params: Record<string, unknown> = {}) {
  return call(
    "POST",
    `/v1/proxy/${v}/stream`,
    { jsonrpc: "2.0", id: 5, method, params },
    { ...OLD, "mcp-session-id": session, "mcp-protocol-version": "2025-06-18" },
  );
}

describe("virtual MCP server: older members that misbehave", () => {
  it("lists the good member's tools; the others are left out", async () => {
    expect(session).toBeTruthy();
    const listed = await oldCall("tools/list");
    expect(listed.status).toBe(200);
    expect(listed.json.result.tools.map((t: { name: string }) => t.name)).toEqual([
      "good__echo",
      "good__slow_echo",
    ]);
  });

  it("fails a call to a member that never answers initialize as a time-out", async () => {
    const res = await oldCall("tools/call", { name: "silent__x", arguments: {} });
    expect(res.status).toBe(504);
    expect(res.json).toEqual({ error: "upstream timed out" });
    const record = await recordDone(call, res.headers.get("x-gateway-invocation-id") as string);
    expect(record.json).toMatchObject({ status: "failed", error_class: "timeout" });
    expect(posts(silent, "tools/call")).toBe(0);
  });

  it("answers a JSON-RPC error for a member that answers initialize with garbage", async () => {
    const res = await oldCall("tools/call", { name: "garbage__x", arguments: {} });
    expect(res.status).toBe(502);
    expect(res.json).toMatchObject({ jsonrpc: "2.0", id: 5, error: { code: -32603 } });
    expect(res.json.error.message).toContain("handshake");
    const record = await recordDone(call, res.headers.get("x-gateway-invocation-id") as string);
    expect(record.json).toMatchObject({ status: "failed", routed_agent_id: garbageId });
  });

  it("re-opens a dropped session once, then answers a JSON-RPC error (both generations of caller)", async () => {
    const before = posts(dropper, "initialize");
    const res = await oldCall("tools/call", { name: "dropper__x", arguments: {} });
    expect(res.status).toBe(502);
    expect(res.json).toMatchObject({ jsonrpc: "2.0", id: 5, error: { code: -32603 } });
    expect(res.json.error.message).toContain("session expired");
    // The first call opens the session (once) and, after its 404, one new one: no more.
    expect(posts(dropper, "tools/call")).toBe(2);
    expect(posts(dropper, "initialize") - before).toBeLessThanOrEqual(2);
    const modern = await stream(call, v, rpc("tools/call", { name: "dropper__x", arguments: {} }, 6));
    expect(modern.status).toBe(502);
    expect(modern.json).toMatchObject({ jsonrpc: "2.0", id: 6, error: { code: -32603 } });
    expect(posts(dropper, "tools/call")).toBe(4);
  });
});
