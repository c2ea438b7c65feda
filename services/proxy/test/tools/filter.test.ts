// @stores once: per-caller tool lists filtered on the relay.
import type { ServerResponse } from "node:http";
import { startModernUpstream, startUpstream, type TestApp, type Upstream } from "@gw/testkit";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { type Caller, caller, pollDone, startGateway } from "../helpers.ts";
import { catalogWhen, closeAll, closers, connect, mcpAgent, tool, toolsUpstream } from "./support.ts";

// Per-caller tool lists (docs/tools.md): with a tenant policy, a tools/list answer omits the
// tools the caller could never call; only the tools array changes, and it fails closed.

let gw: TestApp;
let call: Caller;

beforeAll(async () => {
  gw = await startGateway();
});
// A tenant per test: each writes its own policy (or none).
beforeEach(async () => {
  call = await caller(gw);
});
afterEach(closeAll);
afterAll(async () => {
  await gw?.close();
});

const LIST = { jsonrpc: "2.0", id: 7, method: "tools/list" };

async function rawUpstream(answer: (res: ServerResponse, body: Buffer) => void): Promise<Upstream> {
  const u = await startUpstream((_req, res, body) => answer(res, body));
  closers.push(u.close);
  return u;
}

function json(res: ServerResponse, text: string | Buffer, type = "application/json") {
  res.writeHead(200, { "content-type": type, "mcp-session-id": "s-1" }).end(text);
}

const MODERN_HEADERS = {
  "content-type": "application/json",
  accept: "application/json, text/event-stream",
  "mcp-protocol-version": "2026-07-28",
  "mcp-method": "tools/list",
};
const MODERN_LIST = {
  jsonrpc: "2.0",
  id: 3,
  method: "tools/list",
  params: {
    _meta: {
      "io.modelcontextprotocol/protocolVersion": "2026-07-28",
      "io.modelcontextprotocol/clientCapabilities": {},
    },
  },
};

const stream = (agentId: string, body: unknown = LIST) =>
  call("POST", `/v1/proxy/${agentId}/stream`, body, { accept: "application/json, text/event-stream" });

describe("filtering", () => {
  it("judges a condition on the caller for the caller who lists: an admin sees the admin tools, another caller does not", async () => {
    const up = await toolsUpstream({ tools: ["search", "admin_drop", "transfer"].map((n) => tool(n)) });
    const agentId = await mcpAgent(call, up.url);
    await call("PUT", "/v1/policy", {
      rules: [
        { action: "deny", match: { tools: ["admin_*"] }, when: '!("admin" in principal.scopes)' },
        // Needs the arguments: listed for everyone, judged on each call.
        { action: "deny", match: { tools: ["transfer"] }, when: "call.arguments.amount > 100.0" },
      ],
    });
    const admin = await caller(gw, ["admin"], call.tenant);
    const names = async (who: Caller) =>
      (await (await connect(gw, who, agentId)).listTools()).tools.map((t) => t.name);
    expect(await names(call)).toEqual(["search", "transfer"]);
    expect(await names(admin)).toEqual(["search", "admin_drop", "transfer"]);
    // The same caller again, after the admin: no memo of another caller leaks into its list.
    expect(await names(call)).toEqual(["search", "transfer"]);
  });

  it("omits denied tools from the official client's list, keeping order (SSE and JSON answers)", async () => {
    for (const jsonResponse of [false, true]) {
      const up = await toolsUpstream({
        tools: ["search", "admin_delete", "fetch", "admin_drop", "export"].map((n) => tool(n)),
        jsonResponse,
      });
      const agentId = await mcpAgent(call, up.url);
      await call("PUT", "/v1/policy", {
        rules: [
          { action: "deny", match: { tools: ["admin_*"] } },
          { action: "deny", match: { agents: ["agt_someone_else"], tools: ["export"] } },
          // Needs the arguments to decide: the tool stays listed.
          { action: "deny", match: { tools: ["export"], max_body_bytes: 10 } },
        ],
      });
      const client = await connect(gw, call, agentId);
      const listed = await client.listTools();
      expect(listed.tools.map((t) => t.name)).toEqual(["search", "fetch", "export"]);
      // The catalog still learns the whole list.
      await catalogWhen(call, agentId, (r) => r.json.data?.length === 5);
    }
  });

  it("omits only tools whose deciding rule is deny: warn and require_approval leave them listed, on both paths", async () => {
    const up = await toolsUpstream({
      tools: ["search", "transfer", "admin_drop", "export"].map((n) => tool(n)),
    });
    const agentId = await mcpAgent(call, up.url);
    const put = await call("PUT", "/v1/policy", {
      default: "allow",
      rules: [
        { action: "warn", match: { tools: ["search"] } },
        { action: "require_approval", match: { methods: ["tools/call"], tools: ["transfer"] } },
        { action: "deny", match: { tools: ["admin_*"] } },
      ],
    });
    expect(put.status).toBe(200);
    const client = await connect(gw, call, agentId);
    expect((await client.listTools()).tools.map((t) => t.name)).toEqual(["search", "transfer", "export"]);
    // Listed because the caller may still call it: the call asks for an approval.
    const held = await call(
      "POST",
      `/v1/proxy/${agentId}/stream`,
      { jsonrpc: "2.0", id: 9, method: "tools/call", params: { name: "transfer", arguments: {} } },
      { accept: "application/json, text/event-stream" },
    );
    expect(held.status).toBe(403);
    expect(held.json).toMatchObject({ error: "approval required" });
    // The transactional path, in the official client's session (an SSE answer: its response event).
    const session = (client.transport as { sessionId?: string } | undefined)?.sessionId ?? "";
    const accepted = await call("POST", `/v1/proxy/${agentId}`, LIST, {
      accept: "application/json, text/event-stream",
      "mcp-session-id": session,
    });
    expect(accepted.status).toBe(202);
    const done = await pollDone(call, agentId, accepted.json.invocation_id);
    const text = Buffer.from(done.json.response.body_b64, "base64").toString();
    const polled = JSON.parse(text.startsWith("{") ? text : (/^data: (.*)$/m.exec(text)?.[1] ?? ""));
    expect(polled.result.tools.map((t: { name: string }) => t.name)).toEqual([
      "search",
      "transfer",
      "export",
    ]);
  });

  it("filters a 2026-07-28 server's (the official v2 SDK's) stateless answer and learns it", async () => {
    const up = await startModernUpstream([tool("a"), tool("admin"), tool("b")]);
    closers.push(up.close);
    const agentId = await mcpAgent(call, up.url, { mcp_protocol_version: "2026-07-28" });
    await call("PUT", "/v1/policy", { rules: [{ action: "deny", match: { tools: ["admin"] } }] });
    const direct = await fetch(up.url, {
      method: "POST",
      headers: MODERN_HEADERS,
      body: JSON.stringify(MODERN_LIST),
    });
    const unfiltered = (await direct.json()) as { result: Record<string, unknown> };
    const res = await call("POST", `/v1/proxy/${agentId}/stream`, MODERN_LIST, MODERN_HEADERS);
    expect(res.status).toBe(200);
    const { tools, ...rest } = res.json.result;
    expect(tools.map((t: { name: string }) => t.name)).toEqual(["a", "b"]);
    const { tools: _all, ...unfilteredRest } = unfiltered.result;
    expect(rest).toEqual(unfilteredRest);
    await catalogWhen(call, agentId, (r) => r.json.data?.length === 3);
  });

  it("changes only the tools array: id, cursor, other fields and spacing stay byte for byte, with a correct length", async () => {
    const body =
      '{ "jsonrpc" : "2.0",\n "result": {"tools": [ {"name":"a","inputSchema":{"type":"object"},"x":1.50},\n{"name":"admin","inputSchema":{}} , {"name":"b","inputSchema":{"type":"object"}}], "nextCursor":"c\\u00e9", "_meta":{"k":[1,2]}}, "id": 7 }';
    const up = await rawUpstream((res) => json(res, body));
    const agentId = await mcpAgent(call, up.url);
    await call("PUT", "/v1/policy", {
      default: "allow",
      rules: [{ action: "deny", match: { tools: ["admin"] } }],
    });
    const res = await stream(agentId);
    expect(res.status).toBe(200);
    expect(res.text).toBe(
      '{ "jsonrpc" : "2.0",\n "result": {"tools": [{"name":"a","inputSchema":{"type":"object"},"x":1.50},{"name":"b","inputSchema":{"type":"object"}}], "nextCursor":"c\\u00e9", "_meta":{"k":[1,2]}}, "id": 7 }',
    );
    expect(res.headers.get("content-length")).toBe(String(Buffer.byteLength(res.text)));
    expect(res.headers.get("mcp-session-id")).toBe("s-1");
    expect(res.headers.get("x-gateway-invocation-id")).toMatch(/^inv_/);
  });

  it("rewrites only the response event of an SSE answer", async () => {
    const sse =
      ': priming\n\nevent: message\ndata: {"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"x"}}\n\n' +
      'id: 42\r\nevent: message\r\ndata: {"jsonrpc":"2.0","id":7,"result":{"tools":[{"name":"admin","inputSchema":{}},{"name":"a","inputSchema":{}}]}}\r\n\r\n';
    const up = await rawUpstream((res) => json(res, sse, "text/event-stream"));
    const agentId = await mcpAgent(call, up.url);
    await call("PUT", "/v1/policy", { rules: [{ action: "deny", match: { tools: ["admin"] } }] });
    const res = await stream(agentId);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("text/event-stream");
    expect(res.text).toBe(
      ': priming\n\nevent: message\ndata: {"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"x"}}\n\n' +
        'id: 42\r\nevent: message\r\ndata: {"jsonrpc":"2.0","id":7,"result":{"tools":[{"name":"a","inputSchema":{}}]}}\n\r\n',
    );
  });

  it("filters a collected (transactional) tools/list answer the same way", async () => {
    const up = await rawUpstream((res) =>
      json(
        res,
        '{"jsonrpc":"2.0","id":7,"result":{"tools":[{"name":"admin","inputSchema":{}},{"name":"a","inputSchema":{}}]}}',
      ),
    );
    const agentId = await mcpAgent(call, up.url);
    await call("PUT", "/v1/policy", { rules: [{ action: "deny", match: { tools: ["admin"] } }] });
    const accepted = await call("POST", `/v1/proxy/${agentId}`, LIST);
    expect(accepted.status).toBe(202);
    const done = await pollDone(call, agentId, accepted.json.invocation_id);
    const text = Buffer.from(done.json.response.body_b64, "base64").toString();
    expect(text).toBe('{"jsonrpc":"2.0","id":7,"result":{"tools":[{"name":"a","inputSchema":{}}]}}');
  });

  it("without a tenant policy, relays the answer verbatim whatever it is", async () => {
    const up = await rawUpstream((res) => json(res, "not json at all"));
    const agentId = await mcpAgent(call, up.url);
    const res = await stream(agentId);
    expect(res.status).toBe(200);
    expect(res.text).toBe("not json at all");
  });
});

describe("fails closed", () => {
  const REFUSED = {
    jsonrpc: "2.0",
    id: 7,
    error: { code: -32603, message: "tool list could not be filtered" },
  };

  for (const [what, send] of [
    ["an answer that is not JSON", (res: ServerResponse) => json(res, "<html>oops</html>")],
    [
      "a result whose tools is not an array",
      (res: ServerResponse) => json(res, '{"jsonrpc":"2.0","id":7,"result":{"tools":{}}}'),
    ],
    [
      "duplicate result members",
      (res: ServerResponse) =>
        json(res, '{"jsonrpc":"2.0","id":7,"result":{"tools":[]},"result":{"tools":[{"name":"admin"}]}}'),
    ],
    [
      "an SSE answer without the response",
      (res: ServerResponse) => json(res, "event: message\ndata: {}\n\n", "text/event-stream"),
    ],
    [
      "an answer over 8 MiB",
      (res: ServerResponse) => {
        const pad = "x".repeat(9 * 1024 * 1024);
        json(res, `{"jsonrpc":"2.0","id":7,"result":{"tools":[{"name":"a","description":"${pad}"}]}}`);
      },
    ],
  ] as const) {
    it(`answers -32603 on the upstream's 200 for ${what}, never the list`, async () => {
      const up = await rawUpstream(send);
      const agentId = await mcpAgent(call, up.url);
      await call("PUT", "/v1/policy", { rules: [{ action: "deny", match: { tools: ["admin"] } }] });
      const res = await stream(agentId);
      expect(res.status).toBe(200);
      expect(res.json).toEqual(REFUSED);
      expect(res.headers.get("content-type")).toBe("application/json");
      expect(res.text).not.toContain("admin");
    });
  }

  it("answers -32603 for a collected (transactional) answer over 8 MiB, never the list", async () => {
    // The worker collects up to 32 MiB; the filter holds at most 8 MiB on both paths.
    const pad = "x".repeat(9 * 1024 * 1024);
    const up = await rawUpstream((res) =>
      json(
        res,
        `{"jsonrpc":"2.0","id":7,"result":{"tools":[{"name":"admin"},{"name":"a","description":"${pad}"}]}}`,
      ),
    );
    const agentId = await mcpAgent(call, up.url);
    await call("PUT", "/v1/policy", { rules: [{ action: "deny", match: { tools: ["admin"] } }] });
    const accepted = await call("POST", `/v1/proxy/${agentId}`, LIST);
    expect(accepted.status).toBe(202);
    const done = await pollDone(call, agentId, accepted.json.invocation_id);
    expect(done.json.response.status).toBe(200);
    expect(JSON.parse(Buffer.from(done.json.response.body_b64, "base64").toString())).toEqual(REFUSED);
  });

  it("omits entries without a string name, keeps duplicates decided by name, and learns the first of each", async () => {
    const up = await rawUpstream((res) =>
      json(
        res,
        '{"jsonrpc":"2.0","id":7,"result":{"tools":[{"name":"a","inputSchema":{}},{"name":5},"str",{"name":"a","inputSchema":{"v":2}},{"name":"admin"}]}}',
      ),
    );
    const agentId = await mcpAgent(call, up.url);
    await call("PUT", "/v1/policy", { rules: [{ action: "deny", match: { tools: ["admin"] } }] });
    const res = await stream(agentId);
    expect(res.json.result.tools).toEqual([
      { name: "a", inputSchema: {} },
      { name: "a", inputSchema: { v: 2 } },
    ]);
    const catalog = await catalogWhen(call, agentId, (r) => r.json.data?.length === 2);
    expect(catalog.json.data.map((t: { name: string }) => t.name)).toEqual(["a", "admin"]);
    expect(catalog.json.data[0].input_schema).toEqual({});
  });

  it("survives a server whose cursor loops: every page answers, nothing hangs, nothing is marked removed", async () => {
    const up = await rawUpstream((res) =>
      json(
        res,
        '{"jsonrpc":"2.0","id":7,"result":{"tools":[{"name":"a","inputSchema":{}}],"nextCursor":"same"}}',
      ),
    );
    const agentId = await mcpAgent(call, up.url);
    for (let i = 0; i < 4; i++) {
      const res = await stream(agentId, i === 0 ? LIST : { ...LIST, params: { cursor: "same" } });
      expect(res.status).toBe(200);
      expect(res.json.result.nextCursor).toBe("same");
    }
    const catalog = await catalogWhen(call, agentId, (r) => r.json.data?.length === 1);
    expect(catalog.json.refreshed_at).toBeNull();
  });
});
