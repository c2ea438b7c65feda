// @stores once: the MCP protocol through a virtual server.
import type { TestApp } from "@gw/testkit";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { type Caller, caller, recordDone, startGateway } from "../helpers.ts";
import {
  META,
  memberAgent,
  memberPool,
  REVISION,
  relayed,
  rpc,
  stream,
  transact,
  virtualAgent,
} from "./fixture.ts";

// What the revision requires of a virtual server's answers, on both proxy paths: removed and
// unknown methods, older protocol versions, GET/DELETE, cursors, notifications, cache hints.

let gw: TestApp;
let call: Caller;
const pool = memberPool();

/** The gateway's GW_PUBLIC_URL: a browser page of its own origin may call a virtual server. */
const PUBLIC_ORIGIN = "https://gw.example.com";

beforeAll(async () => {
  gw = await startGateway({ GW_PUBLIC_URL: PUBLIC_ORIGIN });
  call = await caller(gw);
});
afterEach(() => pool.closeAll());
afterAll(() => gw?.close());

async function twoMembers() {
  const alpha = await pool.v2("alpha", { tools: ["t1", "t2"] });
  const beta = await pool.v2("beta", { tools: ["t3"] });
  const a = await memberAgent(call, alpha.url);
  const b = await memberAgent(call, beta.url);
  const v = await virtualAgent(call, [
    { agent_id: a, prefix: "a" },
    { agent_id: b, prefix: "b" },
  ]);
  return { alpha, beta, a, b, v };
}

describe("virtual MCP server: the revision's answers", () => {
  it("answers removed and unknown methods 404 with -32601 and the request id, on both paths", async () => {
    const { v, alpha } = await twoMembers();
    for (const method of ["initialize", "ping", "logging/setLevel", "tools/frobnicate"]) {
      const req = rpc(
        method,
        method === "initialize" ? { protocolVersion: REVISION, capabilities: {} } : {},
        `id-${method}`,
      );
      const res = await stream(call, v, req);
      expect(res.status, method).toBe(404);
      expect(res.json).toEqual({
        jsonrpc: "2.0",
        id: `id-${method}`,
        error: { code: -32601, message: "Method not found" },
      });
      const t = await transact(call, v, req);
      expect(t.accepted.status).toBe(202);
      expect(t.polled?.json.response.status).toBe(404);
      expect(t.body).toMatchObject({ id: `id-${method}`, error: { code: -32601 } });
    }
    // The gateway answered itself: no member was asked.
    expect(alpha.requests).toHaveLength(0);
  });

  it("answers a protocol version it does not know with -32022 naming the supported revision", async () => {
    // Older revisions are served (older-revisions.test.ts); a version no revision names is refused.
    const { v } = await twoMembers();
    const headers = { "content-type": "application/json", accept: "application/json, text/event-stream" };
    const unknown = await call(
      "POST",
      `/v1/proxy/${v}/stream`,
      { jsonrpc: "2.0", id: 8, method: "tools/list" },
      { ...headers, "mcp-protocol-version": "2024-01-01" },
    );
    expect(unknown.status).toBe(400);
    expect(unknown.json.error).toMatchObject({ code: -32022, data: { supported: [REVISION] } });
    const req = rpc("tools/list");
    const claimed = {
      ...req.body,
      params: { _meta: { ...META, "io.modelcontextprotocol/protocolVersion": "2025-06-18" } },
    };
    const t = await transact(call, v, { body: claimed, headers });
    expect(t.body).toMatchObject({ error: { code: -32022, data: { supported: [REVISION] } } });
  });

  it("answers headers that disagree with the body, or a missing Mcp-Method or Mcp-Name, with -32020 on both paths", async () => {
    const { v, alpha } = await twoMembers();
    const tool = rpc("tools/call", { name: "a__t1", arguments: { text: "x" } }, "h-1");
    const { "mcp-name": _, ...unnamed } = tool.headers;
    const { "mcp-method": __, ...unmethoded } = tool.headers;
    for (const [headers, header] of [
      [{ ...tool.headers, "mcp-name": "a__t2" }, "Mcp-Name"],
      // Values are case-sensitive.
      [{ ...tool.headers, "mcp-name": "A__t1" }, "Mcp-Name"],
      [{ ...tool.headers, "mcp-method": "tools/list" }, "Mcp-Method"],
      [unnamed, "Mcp-Name"],
      [unmethoded, "Mcp-Method"],
    ] as const) {
      const res = await stream(call, v, { body: tool.body, headers });
      expect(res.status, JSON.stringify(headers)).toBe(400);
      expect(res.json).toEqual({
        jsonrpc: "2.0",
        id: "h-1",
        error: { code: -32020, message: expect.stringContaining(header) },
      });
      expect(res.headers.get("x-gateway-invocation-id")).toBeNull();
      const t = await call("POST", `/v1/proxy/${v}`, tool.body, headers);
      expect(t.status).toBe(400);
      expect(t.json).toMatchObject({ id: "h-1", error: { code: -32020 } });
      expect(t.headers.get("x-gateway-invocation-id")).toBeNull();
    }
    expect(relayed(alpha.requests)).toHaveLength(0);
    // With its headers the call is routed.
    const ok = await stream(call, v, tool);
    expect(ok.status).toBe(200);
    expect(relayed(alpha.requests).filter((r) => r.rpcMethod === "tools/call")).toHaveLength(1);
  });

  it("records the answers it gives itself with upstream_status null, a member's with the member's status", async () => {
    const { v } = await twoMembers();
    const envelopeOf = (version: string) => {
      const req = rpc("tools/list", {}, "mismatch");
      return {
        ...req.body,
        params: { _meta: { ...META, "io.modelcontextprotocol/protocolVersion": version } },
      };
    };
    for (const [req, status, outcome] of [
      // An unknown tool name: the gateway's -32602, no member asked.
      [rpc("tools/call", { name: "zz__t1", arguments: {} }), 200, { status: "succeeded", error_class: null }],
      [rpc("tools/frobnicate"), 404, { status: "failed", error_class: "upstream_4xx" }],
      // The version header and the envelope disagree: the revision's header mismatch.
      [
        { body: envelopeOf("2025-06-18"), headers: rpc("tools/list").headers },
        400,
        { status: "failed", error_class: "upstream_4xx" },
      ],
    ] as const) {
      const res = await stream(call, v, req);
      expect(res.status).toBe(status);
      const id = res.headers.get("x-gateway-invocation-id") as string;
      const record = await recordDone(call, id);
      expect(record.json).toMatchObject({ ...outcome, upstream_status: null });
      const t = await transact(call, v, req);
      expect(t.polled?.json).toMatchObject({ ...outcome, upstream_status: null });
      expect(t.polled?.json.response.status).toBe(status);
      const polled = await recordDone(call, t.accepted.json.invocation_id);
      expect(polled.json).toMatchObject({ ...outcome, upstream_status: null });
    }
    // Routed and merged answers came from members: their status.
    for (const req of [rpc("tools/call", { name: "a__t1", arguments: { text: "x" } }), rpc("tools/list")]) {
      const res = await stream(call, v, req);
      const record = await recordDone(call, res.headers.get("x-gateway-invocation-id") as string);
      expect(record.json).toMatchObject({ status: "succeeded", upstream_status: 200 });
      const t = await transact(call, v, req);
      expect(t.polled?.json).toMatchObject({ status: "succeeded", upstream_status: 200 });
    }
  });

  it("is behind the Origin check: a rebinding origin is refused before it, its public origin served", async () => {
    const { v, alpha } = await twoMembers();
    const req = rpc("server/discover");
    for (const path of [`/v1/proxy/${v}/stream`, `/v1/proxy/${v}`]) {
      const evil = await call("POST", path, req.body, { ...req.headers, origin: "http://evil.example.com" });
      expect(evil.status, path).toBe(403);
      expect(evil.json, path).toEqual({ error: "origin not allowed" });
    }
    expect(relayed(alpha.requests).filter((r) => r.rpcMethod === "server/discover")).toHaveLength(0);
    expect((await call("GET", `/v1/invocations?agent_id=${v}`)).json.total).toBe(0);
    const own = await stream(call, v, { ...req, headers: { ...req.headers, origin: PUBLIC_ORIGIN } });
    expect(own.status).toBe(200);
    expect(relayed(alpha.requests).filter((r) => r.rpcMethod === "server/discover")).toHaveLength(1);
  });

  it("answers GET 405 without an invocation", async () => {
    const { v } = await twoMembers();
    for (const method of ["GET"]) {
      const res = await call(method, `/v1/proxy/${v}/stream`);
      expect(res.status).toBe(405);
      expect(res.headers.get("allow")).toBe("POST");
      expect(res.json).toMatchObject({ jsonrpc: "2.0", error: { code: -32000 } });
    }
    expect((await call("GET", `/v1/invocations?agent_id=${v}`)).json.total).toBe(0);
  });

  it("answers GET and DELETE of 2026-07-28 405 with or without a session id, without an invocation", async () => {
    const { v } = await twoMembers();
    // A session id this gateway issued (to an older client of the same agent): it changes nothing.
    const init = await call(
      "POST",
      `/v1/proxy/${v}/stream`,
      {
        jsonrpc: "2.0",
        id: 1,
        method: "initialize",
        params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "t", version: "1" } },
      },
      { "content-type": "application/json", accept: "application/json, text/event-stream" },
    );
    const session = init.headers.get("mcp-session-id");
    expect(session).toBeTruthy();
    for (const method of ["GET", "DELETE"]) {
      for (const sessionId of [null, session, "not-a-session"]) {
        const res = await call(method, `/v1/proxy/${v}/stream`, undefined, {
          "mcp-protocol-version": REVISION,
          ...(sessionId === null ? {} : { "mcp-session-id": sessionId }),
        });
        expect(res.status, `${method} ${sessionId}`).toBe(405);
        expect(res.headers.get("allow")).toBe("POST");
        expect(res.json).toMatchObject({ jsonrpc: "2.0", error: { code: -32000 } });
        expect(res.headers.get("x-gateway-invocation-id")).toBeNull();
      }
    }
  });

  it("reads a request of 2026-07-28 as that revision's whatever session id it carries", async () => {
    const { v, alpha } = await twoMembers();
    const init = await call(
      "POST",
      `/v1/proxy/${v}/stream`,
      {
        jsonrpc: "2.0",
        id: 1,
        method: "initialize",
        params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "t", version: "1" } },
      },
      { "content-type": "application/json", accept: "application/json, text/event-stream" },
    );
    const session = init.headers.get("mcp-session-id") as string;
    // The header names 2026-07-28 and the body has no envelope: that revision's -32602, not an
    // older client's session being served (a valid id) or refused (404 for one that is not).
    const { headers } = rpc("tools/list");
    for (const sessionId of [session, "not-a-session"]) {
      const res = await call(
        "POST",
        `/v1/proxy/${v}/stream`,
        { jsonrpc: "2.0", id: 5, method: "tools/list" },
        { ...headers, "mcp-session-id": sessionId },
      );
      expect(res.status, sessionId).toBe(400);
      expect(res.json, sessionId).toMatchObject({ jsonrpc: "2.0", id: 5, error: { code: -32602 } });
    }
    expect(relayed(alpha.requests).filter((r) => r.rpcMethod === "tools/list")).toHaveLength(0);
  });

  it("keeps the gateway's own refusals before the MCP layer as {error}", async () => {
    const { v } = await twoMembers();
    const other = await caller(gw);
    const res = await other(
      "POST",
      `/v1/proxy/${v}/stream`,
      rpc("tools/list").body,
      rpc("tools/list").headers,
    );
    expect(res.status).toBe(404);
    expect(res.json).toEqual({ error: "agent not found" });
    const anonymous = await fetch(`${gw.url}/v1/proxy/${v}/stream`, { method: "POST", body: "{}" });
    expect(anonymous.status).toBe(401);
  });

  it("walks every member with one opaque cursor and merges cache hints", async () => {
    const alpha = await pool.v2("alpha", { tools: ["t1"] });
    const beta = await pool.v2("beta", { tools: ["t2"] });
    const a = await memberAgent(call, alpha.url);
    const b = await memberAgent(call, beta.url);
    const v = await virtualAgent(call, [
      { agent_id: a, prefix: "a" },
      { agent_id: b, prefix: "" },
    ]);
    const first = await stream(call, v, rpc("tools/list"));
    expect(first.status).toBe(200);
    expect(first.json.result).toMatchObject({ resultType: "complete", cacheScope: "private", ttlMs: 0 });
    expect(first.json.result.tools.map((t: { name: string }) => t.name)).toEqual(["a__t1", "t2"]);
    expect(first.json.result.nextCursor).toBeUndefined();
    expect(first.json.result._meta["io.modelcontextprotocol/serverInfo"]).toMatchObject({ name: "portal" });
    const bad = await stream(call, v, rpc("tools/list", { cursor: "not-ours" }));
    expect(bad.json.error).toMatchObject({ code: -32602 });
  });

  it("answers server/discover from the members with the agent's name and the revision", async () => {
    const { v } = await twoMembers();
    const res = await stream(call, v, rpc("server/discover"));
    expect(res.status).toBe(200);
    expect(res.json.result).toMatchObject({
      supportedVersions: [REVISION],
      capabilities: { tools: { listChanged: true }, prompts: {}, resources: {}, completions: {} },
      resultType: "complete",
      _meta: { "io.modelcontextprotocol/serverInfo": { name: "portal" } },
    });
    const t = await transact(call, v, rpc("server/discover"));
    expect(t.body.result.supportedVersions).toEqual([REVISION]);
  });

  it("sends a notification to every member and answers 202", async () => {
    const { v, alpha, beta } = await twoMembers();
    const note = {
      jsonrpc: "2.0",
      method: "notifications/cancelled",
      params: { requestId: 3, _meta: META },
    };
    const res = await call("POST", `/v1/proxy/${v}/stream`, note, {
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      "mcp-protocol-version": REVISION,
    });
    expect(res.status).toBe(202);
    expect(relayed(alpha.requests).map((r) => r.rpcMethod)).toEqual(["notifications/cancelled"]);
    expect(relayed(beta.requests).map((r) => r.rpcMethod)).toEqual(["notifications/cancelled"]);
  });

  it("serves lists, routed calls and reads on the transactional path", async () => {
    const { v, a } = await twoMembers();
    const listed = await transact(call, v, rpc("tools/list"));
    expect(listed.body.result.tools.map((t: { name: string }) => t.name)).toEqual([
      "a__t1",
      "a__t2",
      "b__t3",
    ]);
    const called = await transact(call, v, rpc("tools/call", { name: "a__t2", arguments: { text: "z" } }));
    expect(called.body.result.content).toEqual([{ type: "text", text: "alpha:t2:z" }]);
    expect(called.polled?.json).toMatchObject({ routed_agent_id: a, mcp_tool: "a__t2", status: "succeeded" });
    const unknown = await transact(call, v, rpc("tools/call", { name: "zz__t2", arguments: {} }));
    expect(unknown.body.error).toMatchObject({ code: -32602 });
    const read = await transact(call, v, rpc("resources/read", { uri: "beta://readme" }));
    expect(read.body.result.contents).toEqual([{ uri: "beta://readme", text: "beta readme" }]);
  });
});
