// @stores both: a refresh writes the catalog.
import { lookup } from "node:dns/promises";
import type { ServerResponse } from "node:http";
import { hostname } from "node:os";
import { startModernUpstream, startUpstream, type TestApp, type Upstream } from "@gw/testkit";
import { isBlockedIp, ssrfPolicy } from "@gw/upstream";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { type Caller, caller, startGateway } from "../helpers.ts";
import { closeAll, closers, mcpAgent, statuses, tool, toolsUpstream } from "./support.ts";

// POST /v1/agents/{id}/tools/refresh: the gateway lists a server's tools itself (docs/tools.md).

let gw: TestApp;
let call: Caller;

beforeAll(async () => {
  gw = await startGateway();
});
beforeEach(async () => {
  call = await caller(gw);
});
afterEach(closeAll);
afterAll(async () => {
  await gw?.close();
});

async function bearer(secret: string): Promise<string> {
  const res = await call("POST", "/v1/credentials", { name: "mcp", kind: "bearer", secret });
  expect(res.status).toBe(201);
  return res.json.id;
}

describe("refresh", () => {
  it("initializes an older stateful server with the agent's credential, walks every page, ends the session", async () => {
    const up = await toolsUpstream({ tools: ["a", "b", "c"].map((n) => tool(n)), pageSize: 2 });
    const agentId = await mcpAgent(call, up.url, { credential_ref: await bearer("s3cret-token") });
    const res = await call("POST", `/v1/agents/${agentId}/tools/refresh`);
    expect(res.status).toBe(200);
    expect(res.json.complete).toBe(true);
    expect(res.json.data.map((t: { name: string }) => t.name)).toEqual(["a", "b", "c"]);
    expect(res.json.refreshed_at).toEqual(expect.any(String));
    expect(res.text).not.toContain("s3cret-token");
    expect(up.requests.map((r) => r.rpcMethod ?? r.httpMethod)).toEqual([
      "initialize",
      "notifications/initialized",
      "tools/list",
      "tools/list",
      "DELETE",
    ]);
    expect(up.requests.every((r) => r.authorization === "Bearer s3cret-token")).toBe(true);
    const sid = up.requests[1]?.sessionId;
    expect(sid).toEqual(expect.any(String));
    expect(up.requests.slice(1).every((r) => r.sessionId === sid)).toBe(true);

    // Pinned, then the server changes a tool and drops another: the next refresh shows both.
    await call("POST", `/v1/agents/${agentId}/tools/pin`);
    up.tools[0] = tool("a", "changed");
    up.tools.pop();
    const again = await call("POST", `/v1/agents/${agentId}/tools/refresh`);
    expect(statuses(again)).toEqual({ a: "drifted", b: "pinned", c: "removed" });
  });

  it("asks a 2026-07-28 server (the official v2 SDK) statelessly: one request, no initialize, no session", async () => {
    const up = await startModernUpstream([tool("a"), tool("b", "the b tool")]);
    closers.push(up.close);
    const agentId = await mcpAgent(call, up.url, { mcp_protocol_version: "2026-07-28" });
    const res = await call("POST", `/v1/agents/${agentId}/tools/refresh`);
    expect(res.status).toBe(200);
    expect(res.json).toMatchObject({ complete: true });
    expect(statuses(res)).toEqual({ a: "unpinned", b: "unpinned" });
    expect(res.json.data[1].description).toBe("the b tool");
    expect(up.requests).toEqual([{ method: "tools/list", version: "2026-07-28", session: null }]);

    // The server drops a tool: the next stateless list is complete, and a pinned absentee is removed.
    await call("POST", `/v1/agents/${agentId}/tools/pin`);
    up.tools.pop();
    expect(statuses(await call("POST", `/v1/agents/${agentId}/tools/refresh`))).toEqual({
      a: "pinned",
      b: "removed",
    });
  });

  it("answers 502 with a plain error for a server that is not an MCP server, and 404/400 as the catalog does", async () => {
    const up = await startUpstream((_req, res) => {
      res.writeHead(200, { "content-type": "text/html" }).end("<html>hello</html>");
    });
    closers.push(up.close);
    const agentId = await mcpAgent(call, `${up.url}/mcp`);
    const res = await call("POST", `/v1/agents/${agentId}/tools/refresh`);
    expect(res.status).toBe(502);
    expect(res.json).toEqual({ error: "the upstream did not answer tools/list as an MCP server" });
    const other = await caller(gw);
    expect((await other("POST", `/v1/agents/${agentId}/tools/refresh`)).status).toBe(404);
    const http = await call("POST", "/v1/agents", { name: "h", upstream_url: `${up.url}/` });
    expect((await call("POST", `/v1/agents/${http.json.id}/tools/refresh`)).status).toBe(400);
  });

  it("answers 502 when the server is unreachable", async () => {
    const up = await startUpstream(() => {});
    await up.close();
    const agentId = await mcpAgent(call, `${up.url}/mcp`);
    const res = await call("POST", `/v1/agents/${agentId}/tools/refresh`);
    expect(res.status).toBe(502);
    expect(res.json).toEqual({ error: "upstream unreachable" });
  });
});

describe("refresh: the dial-time SSRF guard", () => {
  it("answers 502 `upstream address is not allowed` for a name that resolves to a blocked address, and never reaches it", async () => {
    // The machine's own name resolves to loopback; this deployment exempts no range, so the name
    // passes the write-time check (names are judged when dialled) and is refused at dial time.
    const name = hostname();
    const addrs = await lookup(name, { all: true }).catch(() => []);
    expect(
      addrs.length > 0 && addrs.every((a) => isBlockedIp(a.address, ssrfPolicy([]))),
      `${name} must resolve to a blocked address on this machine`,
    ).toBe(true);
    const up = await startUpstream((_req, res) => res.end("reached"));
    closers.push(up.close);
    const strict = await startGateway({ GW_SSRF_ALLOW_CIDRS: "" });
    closers.push(strict.close);
    const c = await caller(strict);
    // An older server (initialize first) and a 2026-07-28 one (tools/list first): both refused.
    for (const extra of [{}, { mcp_protocol_version: "2026-07-28" }]) {
      const agentId = await mcpAgent(c, `http://${name}:${up.port}/mcp`, extra);
      const res = await c("POST", `/v1/agents/${agentId}/tools/refresh`);
      expect(res.status).toBe(502);
      expect(res.json).toEqual({ error: "upstream address is not allowed" });
      const catalog = await c("GET", `/v1/agents/${agentId}/tools`);
      expect(catalog.json).toEqual({ data: [], refreshed_at: null });
    }
    expect(up.received).toHaveLength(0);
  });
});

// A misbehaving 2026-07-28 server (one stateless tools/list per page): what the refresh walk does
// with each kind of bad answer. `answer` gets the request's cursor (null: the first page).
describe("refresh: bad answers", () => {
  async function server(answer: (cursor: string | null, res: ServerResponse, id: unknown) => void) {
    const u: Upstream = await startUpstream((_req, res, body) => {
      const msg = JSON.parse(body.toString());
      answer(typeof msg.params?.cursor === "string" ? msg.params.cursor : null, res, msg.id);
    });
    closers.push(u.close);
    return u;
  }
  const send = (res: ServerResponse, text: string, type = "application/json") =>
    res.writeHead(200, { "content-type": type }).end(text);
  const page = (id: unknown, tools: unknown[], nextCursor?: string) =>
    JSON.stringify({ jsonrpc: "2.0", id, result: { tools, ...(nextCursor ? { nextCursor } : {}) } });
  const modern = (u: Upstream) => mcpAgent(call, `${u.url}/mcp`, { mcp_protocol_version: "2026-07-28" });
  const refresh = (agentId: string) => call("POST", `/v1/agents/${agentId}/tools/refresh`);
  const cursors = (u: Upstream) =>
    u.received.map((r) => JSON.parse(r.body.toString()).params?.cursor ?? null) as Array<string | null>;

  it("stops at a cursor that comes back: 200, complete false, a pinned tool not marked removed", async () => {
    let loop = false;
    const up = await server((cursor, res, id) => {
      if (!loop) return send(res, page(id, [tool("a"), tool("b")]));
      // A → B → A: the server sends back a cursor it already gave.
      send(res, page(id, [tool(cursor === "A" ? "a" : "c")], cursor === "A" ? "B" : "A"));
    });
    const agentId = await modern(up);
    const first = await refresh(agentId);
    expect(first.json.complete).toBe(true);
    const refreshedAt = first.json.refreshed_at;
    await call("POST", `/v1/agents/${agentId}/tools/pin`);
    loop = true;
    up.received.length = 0;
    const res = await refresh(agentId);
    expect(res.status).toBe(200);
    expect(res.json.complete).toBe(false);
    expect(cursors(up)).toEqual([null, "A", "B"]);
    // What was read is learned; b, absent from the pages read, is not marked removed.
    expect(statuses(res)).toEqual({ a: "pinned", b: "pinned", c: "unpinned" });
    expect(res.json.refreshed_at).toBe(refreshedAt);
  });

  it("stops after 100 pages of a server whose cursors never end: 200, complete false", async () => {
    const up = await server((cursor, res, id) => {
      const n = cursor === null ? 0 : Number(cursor);
      send(res, page(id, [tool(`t${n}`)], String(n + 1)));
    });
    const agentId = await modern(up);
    const res = await refresh(agentId);
    expect(res.status).toBe(200);
    expect(res.json.complete).toBe(false);
    expect(up.received).toHaveLength(100);
    expect(res.json.data).toHaveLength(100);
    expect(res.json.refreshed_at).toBeNull();
  });

  it("learns the first of duplicate names and skips entries whose name is not a string", async () => {
    const up = await server((_cursor, res, id) =>
      send(
        res,
        page(id, [
          tool("a", "the first a"),
          { name: 5, inputSchema: {} },
          { name: null },
          { name: ["b"] },
          { name: { x: 1 } },
          { description: "no name at all" },
          "a string",
          null,
          tool("a", "the second a"),
          { name: "" },
          tool("b"),
        ]),
      ),
    );
    const agentId = await modern(up);
    const res = await refresh(agentId);
    expect(res.status).toBe(200);
    expect(res.json.complete).toBe(true);
    expect(statuses(res)).toEqual({ a: "unpinned", b: "unpinned" });
    expect(res.json.data[0].description).toBe("the first a");
  });

  for (const [what, answer] of [
    ["text that is not JSON", (res: ServerResponse) => send(res, "this is not json")],
    ["JSON cut short", (res: ServerResponse, id: unknown) => send(res, page(id, [tool("a")]).slice(0, 30))],
    [
      "a result whose tools is not an array",
      (res: ServerResponse, id: unknown) =>
        send(res, JSON.stringify({ jsonrpc: "2.0", id, result: { tools: { a: 1 } } })),
    ],
    [
      "a JSON-RPC error",
      (res: ServerResponse, id: unknown) =>
        send(res, JSON.stringify({ jsonrpc: "2.0", id, error: { code: -32601, message: "no" } })),
    ],
    [
      "an SSE answer without the response event",
      (res: ServerResponse) =>
        send(res, 'event: message\ndata: {"jsonrpc":"2.0","method":"x"}\n\n', "text/event-stream"),
    ],
    [
      "a JSON answer over 8 MiB",
      (res: ServerResponse, id: unknown) => send(res, page(id, [tool("a", "x".repeat(9 * 1024 * 1024))])),
    ],
    [
      "an SSE answer over 8 MiB",
      (res: ServerResponse, id: unknown) =>
        send(
          res,
          `event: message\ndata: ${page(id, [tool("a", "x".repeat(9 * 1024 * 1024))])}\n\n`,
          "text/event-stream",
        ),
    ],
  ] as const) {
    it(`answers 502 for ${what} and learns nothing`, async () => {
      const up = await server((_cursor, res, id) => answer(res, id));
      const agentId = await modern(up);
      const res = await refresh(agentId);
      expect(res.status).toBe(502);
      expect(res.json).toEqual({ error: "the upstream did not answer tools/list as an MCP server" });
      expect((await call("GET", `/v1/agents/${agentId}/tools`)).json).toEqual({
        data: [],
        refreshed_at: null,
      });
    });
  }

  it("answers 502 for a bad later page, keeping what the earlier pages taught, nothing marked removed", async () => {
    let broken = false;
    const up = await server((cursor, res, id) => {
      if (cursor === null) return send(res, page(id, [tool("a")], "2"));
      if (broken) return send(res, "<html>oops</html>", "text/html");
      send(res, page(id, [tool("b")]));
    });
    const agentId = await modern(up);
    expect((await refresh(agentId)).json.complete).toBe(true);
    await call("POST", `/v1/agents/${agentId}/tools/pin`);
    broken = true;
    const res = await refresh(agentId);
    expect(res.status).toBe(502);
    expect(res.json).toEqual({ error: "the upstream did not answer tools/list as an MCP server" });
    expect(statuses(await call("GET", `/v1/agents/${agentId}/tools`))).toEqual({ a: "pinned", b: "pinned" });
  });
});
