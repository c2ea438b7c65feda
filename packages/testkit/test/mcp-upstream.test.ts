import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { afterEach, describe, expect, it } from "vitest";
import { type McpUpstream, mcpInitialize, startMcpUpstream } from "../src/mcp-upstream.ts";

// The fixture is what the gateway's MCP tests stand on, so it is proven here first: the SDK's own
// client talks to it directly, with no gateway in between.

let upstream: McpUpstream | undefined;
let client: Client | undefined;

afterEach(async () => {
  await client?.close();
  await upstream?.close();
  client = undefined;
  upstream = undefined;
});

async function connect(up: McpUpstream, headers: Record<string, string> = {}) {
  const transport = new StreamableHTTPClientTransport(new URL(up.url), { requestInit: { headers } });
  const c = new Client({ name: "fixture-test", version: "1.0.0" });
  await c.connect(transport);
  return { client: c, transport };
}

describe("startMcpUpstream", () => {
  it("serves initialize, tools/list and tools/call to the SDK client, in one session", async () => {
    upstream = await startMcpUpstream();
    const conn = await connect(upstream, { "x-test-header": "kept" });
    client = conn.client;

    expect(conn.transport.sessionId).toMatch(/^[0-9a-f-]{36}$/);
    expect(conn.transport.protocolVersion).toMatch(/^\d{4}-\d{2}-\d{2}$/);
    expect(upstream.sessionIds()).toEqual([conn.transport.sessionId]);
    expect(client.getServerVersion()).toMatchObject({ name: "gw-test-upstream" });

    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual(["add", "ask_model", "ask_user", "echo", "log_echo"]);

    const echoed = await client.callTool({ name: "echo", arguments: { text: "hello" } });
    expect(echoed.content).toEqual([{ type: "text", text: "hello" }]);
    const sum = await client.callTool({ name: "add", arguments: { a: 2, b: 40 } });
    expect(sum.content).toEqual([{ type: "text", text: "42" }]);

    const init = upstream.posts("initialize");
    expect(init).toHaveLength(1);
    expect(init[0]?.headers["mcp-session-id"]).toBeUndefined();
    expect(init[0]?.headers["x-test-header"]).toBe("kept");
    const calls = upstream.posts("tools/call");
    expect(calls.map((r) => r.tool)).toEqual(["echo", "add"]);
    for (const r of [...upstream.posts("tools/list"), ...calls]) {
      expect(r.headers["mcp-session-id"]).toBe(conn.transport.sessionId);
      expect(r.headers["mcp-protocol-version"]).toBe(conn.transport.protocolVersion);
      expect(r.headers.accept).toContain("text/event-stream");
    }
    expect(upstream.posts("notifications/initialized")).toHaveLength(1);
  });

  it("delivers a notification sent ahead of a tool's result", async () => {
    upstream = await startMcpUpstream();
    ({ client } = await connect(upstream));
    const logged: unknown[] = [];
    client.fallbackNotificationHandler = async (n) => {
      logged.push(n);
    };
    const res = await client.callTool({ name: "log_echo", arguments: { text: "abc" } });
    expect(res.content).toEqual([{ type: "text", text: "abc" }]);
    expect(logged).toEqual([
      {
        jsonrpc: "2.0",
        method: "notifications/message",
        params: { level: "info", data: "echoing 3 characters" },
      },
    ]);
  });

  it("answers SSE by default and JSON when asked", async () => {
    const init = JSON.stringify(mcpInitialize());
    const headers = { "content-type": "application/json", accept: "application/json, text/event-stream" };
    for (const jsonResponse of [false, true]) {
      const up = await startMcpUpstream({ jsonResponse });
      try {
        const res = await fetch(up.url, { method: "POST", headers, body: init });
        expect(res.status).toBe(200);
        expect(res.headers.get("content-type")).toContain(
          jsonResponse ? "application/json" : "text/event-stream",
        );
        expect(res.headers.get("mcp-session-id")).toBe(up.sessionIds()[0]);
        await res.body?.cancel();
      } finally {
        await up.close();
      }
    }
  });

  it("fails the first N POSTs of a method with 503, and only that method", async () => {
    upstream = await startMcpUpstream({ failFirst: { "tools/list": 2 } });
    ({ client } = await connect(upstream));
    await expect(client.listTools()).rejects.toMatchObject({ code: 503 });
    await expect(client.listTools()).rejects.toMatchObject({ code: 503 });
    const { tools } = await client.listTools();
    expect(tools).toHaveLength(5);
    expect(upstream.posts("tools/list").map((r) => r.injectedFailure)).toEqual([true, true, false]);
    expect(upstream.posts("initialize").map((r) => r.injectedFailure)).toEqual([false]);
  });

  it("refuses an unknown session with 404 and a non-initialize request without a session with 400", async () => {
    upstream = await startMcpUpstream();
    const headers = { "content-type": "application/json", accept: "application/json, text/event-stream" };
    const body = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" });
    const unknown = await fetch(upstream.url, {
      method: "POST",
      headers: { ...headers, "mcp-session-id": "nope" },
      body,
    });
    expect(unknown.status).toBe(404);
    const none = await fetch(upstream.url, { method: "POST", headers, body });
    expect(none.status).toBe(400);
  });
});
