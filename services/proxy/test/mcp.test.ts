// @stores once: the MCP protocol on both paths; records are covered by records.test.ts.
import type { ServerResponse } from "node:http";
import {
  eventually,
  type McpUpstream,
  mcpInitialize,
  type Res,
  startMcpUpstream,
  startUpstream,
  type TestApp,
  type Upstream,
} from "@gw/testkit";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import {
  CreateMessageRequestSchema,
  ElicitRequestSchema,
  LoggingMessageNotificationSchema,
} from "@modelcontextprotocol/sdk/types.js";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { type Caller, caller, createAgent, pollDone, startGateway } from "./helpers.ts";

// MCP through the gateway: the official SDK's server as the upstream, the SDK's own client on
// the caller's side, and nothing of ours in between but the real gateway.

let gw: TestApp;
let call: Caller;
const closers: Array<() => Promise<unknown>> = [];

beforeAll(async () => {
  gw = await startGateway();
  call = await caller(gw);
});
afterEach(async () => {
  await Promise.allSettled(closers.splice(0).map((close) => close()));
});
afterAll(async () => {
  await gw?.close();
});

async function mcpUpstream(opts: Parameters<typeof startMcpUpstream>[0] = {}): Promise<McpUpstream> {
  const u = await startMcpUpstream(opts);
  closers.push(u.close);
  return u;
}

async function plainUpstream(handler: Parameters<typeof startUpstream>[0]): Promise<Upstream> {
  const u = await startUpstream(handler);
  closers.push(u.close);
  return u;
}

function mcpAgent(upstreamUrl: string): Promise<string> {
  return createAgent(call, { upstream_url: upstreamUrl, protocol: "mcp", mcp_transport: "streamable_http" });
}

/** The SDK client pointed at the gateway's streaming endpoint with the caller's bearer token. */
async function connect(agentId: string) {
  const transport = new StreamableHTTPClientTransport(new URL(`${gw.url}/v1/proxy/${agentId}/stream`), {
    requestInit: { headers: { Authorization: `Bearer ${call.token}` } },
  });
  const client = new Client({ name: "gw-mcp-test", version: "1.0.0" });
  await client.connect(transport);
  closers.push(() => client.close());
  return { client, transport };
}

/**
 * The agent's invocations of JSON-RPC requests and notifications, oldest first, once all of them
 * are terminal. (The client's standalone GET stream and its DELETE are recorded too, with
 * mcp_method null; the GET stays running while the client is connected.)
 */
async function invocationsOf(agentId: string, count: number) {
  return eventually(async () => {
    const res = await call("GET", `/v1/invocations?agent_id=${agentId}&limit=100`);
    expect(res.status).toBe(200);
    const all = (res.json.data as Array<Record<string, unknown>>).slice().reverse();
    const rows = all.filter((r) => r.mcp_method !== null);
    const done = rows.every((r) => r.status === "succeeded" || r.status === "failed");
    return rows.length === count && done ? rows : undefined;
  });
}

const MCP_HEADERS = {
  "content-type": "application/json",
  accept: "application/json, text/event-stream",
};

/** The JSON-RPC error MCP 2026-07-28 answers a request whose headers disagree with its body with. */
function headerMismatch(id: number, header: "Mcp-Method" | "Mcp-Name") {
  return { jsonrpc: "2.0", id, error: { code: -32020, message: expect.stringContaining(header) } };
}

/** A transactional call: 202, then the terminal poll. */
async function transact(agentId: string, message: unknown, headers: Record<string, string> = {}) {
  const accepted = await call("POST", `/v1/proxy/${agentId}`, JSON.stringify(message), {
    ...MCP_HEADERS,
    ...headers,
  });
  expect(accepted.status).toBe(202);
  const invocationId = accepted.json.invocation_id as string;
  expect(accepted.headers.get("x-gateway-invocation-id")).toBe(invocationId);
  return pollDone(call, agentId, invocationId);
}

function bodyOf(poll: Res): Record<string, unknown> {
  return JSON.parse(Buffer.from(poll.json.response.body_b64 as string, "base64").toString("utf8"));
}

/** initialize + notifications/initialized on the transactional endpoint; returns the session headers. */
async function transactSession(agentId: string): Promise<Record<string, string>> {
  const init = await transact(agentId, mcpInitialize("init-1"));
  expect(init.json.status).toBe("succeeded");
  const session = init.json.response.headers["mcp-session-id"] as string;
  expect(session).toMatch(/^[0-9a-f-]{36}$/);
  const headers = { "mcp-session-id": session, "mcp-protocol-version": "2025-06-18" };
  const initialized = await transact(
    agentId,
    { jsonrpc: "2.0", method: "notifications/initialized" },
    headers,
  );
  expect(initialized.json).toMatchObject({ status: "succeeded", response: { status: 202 } });
  return headers;
}

describe("MCP on the streaming endpoint, with the SDK client", () => {
  it("initializes, lists and calls tools in one session; the invocations record method and tool", async () => {
    const upstream = await mcpUpstream();
    const agent = await mcpAgent(upstream.url);
    const { client, transport } = await connect(agent);
    const logged: string[] = [];
    client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => {
      logged.push(String(n.params.data));
    });

    expect(client.getServerVersion()).toMatchObject({ name: "gw-test-upstream" });
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual(["add", "ask_model", "ask_user", "echo", "log_echo"]);
    const echoed = await client.callTool({ name: "echo", arguments: { text: "hello" } });
    expect(echoed.content).toEqual([{ type: "text", text: "hello" }]);
    const sum = await client.callTool({ name: "add", arguments: { a: 2, b: 40 } });
    expect(sum.content).toEqual([{ type: "text", text: "42" }]);
    // The notification the tool sends ahead of its result arrives through the relayed event stream.
    const logEchoed = await client.callTool({ name: "log_echo", arguments: { text: "hi" } });
    expect(logEchoed.content).toEqual([{ type: "text", text: "hi" }]);
    expect(logged).toEqual(["echoing 2 characters"]);

    // The session id the upstream issued came back through the gateway and went up on every call.
    expect(transport.sessionId).toMatch(/^[0-9a-f-]{36}$/);
    expect(upstream.sessionIds()).toEqual([transport.sessionId]);
    const [init, ...later] = upstream.requests;
    expect(init?.rpcMethod).toBe("initialize");
    expect(init?.headers["mcp-session-id"]).toBeUndefined();
    expect(later.length).toBeGreaterThan(0);
    for (const r of later) {
      expect(r.headers["mcp-session-id"]).toBe(transport.sessionId);
      expect(r.headers["mcp-protocol-version"]).toBe(transport.protocolVersion);
      expect(r.headers.accept).toContain("text/event-stream");
      expect(r.headers.authorization).toBeUndefined();
      expect(r.headers["x-gateway-agent-id"]).toBe(agent);
    }
    // The client opened its standalone stream through the gateway, with the session id.
    const gets = upstream.requests.filter((r) => r.httpMethod === "GET");
    expect(gets.map((r) => r.headers["mcp-session-id"])).toEqual([transport.sessionId]);

    const rows = await invocationsOf(agent, 6);
    expect(rows.map((r) => [r.mcp_method, r.mcp_tool])).toEqual([
      ["initialize", null],
      ["notifications/initialized", null],
      ["tools/list", null],
      ["tools/call", "echo"],
      ["tools/call", "add"],
      ["tools/call", "log_echo"],
    ]);
    for (const r of rows) expect(r).toMatchObject({ mode: "streaming", status: "succeeded" });
    expect(rows[0]?.upstream_status).toBe(200);
    expect(rows[1]?.upstream_status).toBe(202);
  });

  it("forwards the standalone GET stream: sampling and elicitation on it complete; DELETE ends the session", async () => {
    const upstream = await mcpUpstream();
    const agent = await mcpAgent(upstream.url);
    const transport = new StreamableHTTPClientTransport(new URL(`${gw.url}/v1/proxy/${agent}/stream`), {
      requestInit: { headers: { Authorization: `Bearer ${call.token}` } },
    });
    const client = new Client(
      { name: "gw-mcp-test", version: "1.0.0" },
      { capabilities: { sampling: {}, elicitation: {} } },
    );
    const asked: string[] = [];
    client.setRequestHandler(CreateMessageRequestSchema, async (req) => {
      asked.push(JSON.stringify(req.params.messages[0]?.content));
      return { role: "assistant", model: "test-model", content: { type: "text", text: "forty-two" } };
    });
    client.setRequestHandler(ElicitRequestSchema, async () => ({
      action: "accept",
      content: { name: "Ada" },
    }));
    await client.connect(transport);
    closers.push(() => client.close());
    const session = transport.sessionId;

    const sampled = await client.callTool({ name: "ask_model", arguments: { question: "meaning of life?" } });
    expect(sampled.content).toEqual([{ type: "text", text: "forty-two" }]);
    expect(asked).toEqual([JSON.stringify({ type: "text", text: "meaning of life?" })]);
    const elicited = await client.callTool({ name: "ask_user", arguments: {} });
    expect(elicited.content).toEqual([{ type: "text", text: "Ada" }]);

    // The requests went down the GET stream the gateway forwarded; the answers came back as POSTs.
    const gets = upstream.requests.filter((r) => r.httpMethod === "GET");
    expect(gets.map((r) => r.headers["mcp-session-id"])).toEqual([session]);
    expect(gets[0]?.headers.authorization).toBeUndefined();
    expect(gets[0]?.headers["x-gateway-agent-id"]).toBe(agent);

    // DELETE ends the session upstream.
    expect(upstream.sessionIds()).toEqual([session]);
    await transport.terminateSession();
    expect(upstream.requests.filter((r) => r.httpMethod === "DELETE")).toHaveLength(1);
    await eventually(() => (upstream.sessionIds().length === 0 ? true : undefined));
    await client.close();

    // Every exchange is a streaming invocation: the GET stream that the client closed after a 2xx
    // head succeeded, and so did the DELETE.
    const rows = await eventually(async () => {
      const res = await call("GET", `/v1/invocations?agent_id=${agent}&limit=100`);
      const data = res.json.data as Array<Record<string, unknown>>;
      const open = data.some((r) => r.status === "running" || r.status === "pending");
      return data.length >= 8 && !open ? data : undefined;
    });
    for (const r of rows) expect(r).toMatchObject({ mode: "streaming", status: "succeeded" });
    // initialize, notifications/initialized, GET, two tools/call, two responses, DELETE.
    expect(rows).toHaveLength(8);
    const byMethod = rows.map((r) => r.mcp_method);
    expect(byMethod.filter((m) => m === "tools/call")).toHaveLength(2);
    // GET, DELETE and the client's two JSON-RPC responses carry no method.
    expect(byMethod.filter((m) => m === null)).toHaveLength(4);
  });

  it("GET and DELETE are 405 on the transactional path and for http agents", async () => {
    const mcp = await mcpAgent((await mcpUpstream()).url);
    const plain = await plainUpstream((_req, res) => res.writeHead(200).end("ok"));
    const http = await createAgent(call, { upstream_url: plain.url });
    for (const method of ["GET", "DELETE"]) {
      const transactional = await call(method, `/v1/proxy/${mcp}`);
      expect(transactional.status).toBe(405);
      expect(transactional.headers.get("allow")).toBe("POST");
      const httpAgent = await call(method, `/v1/proxy/${http}/stream`);
      expect(httpAgent.status).toBe(405);
      expect(httpAgent.headers.get("allow")).toBe("POST");
      expect(typeof httpAgent.json.error).toBe("string");
    }
    expect(plain.received).toHaveLength(0);
  });

  it("forwards MCP 2026-07-28 headers untouched and refuses a header that disagrees with the body with -32020", async () => {
    const upstream = await mcpUpstream({ jsonResponse: true });
    const agent = await mcpAgent(upstream.url);
    const init = mcpInitialize();
    const ok = await call("POST", `/v1/proxy/${agent}/stream`, JSON.stringify(init), {
      ...MCP_HEADERS,
      "mcp-method": "initialize",
    });
    expect(ok.status).toBe(200);
    expect(upstream.requests[0]?.headers["mcp-method"]).toBe("initialize");
    const session = ok.headers.get("mcp-session-id") ?? "";
    const toolCall = (name: string) =>
      JSON.stringify({
        jsonrpc: "2.0",
        id: 2,
        method: "tools/call",
        params: { name, arguments: { text: "x" } },
      });
    const headers = { ...MCP_HEADERS, "mcp-session-id": session, "mcp-method": "tools/call" };

    const matching = await call("POST", `/v1/proxy/${agent}/stream`, toolCall("echo"), {
      ...headers,
      "mcp-name": "echo",
      "mcp-param-text": "x",
    });
    expect(matching.status).toBe(200);
    const seen = upstream.posts("tools/call")[0]?.headers;
    expect(seen?.["mcp-name"]).toBe("echo");
    expect(seen?.["mcp-param-text"]).toBe("x");

    const before = upstream.requests.length;
    for (const [name, value] of [
      ["mcp-name", "add"],
      ["mcp-name", "Echo"],
      ["mcp-method", "tools/list"],
    ] as const) {
      for (const path of [`/v1/proxy/${agent}/stream`, `/v1/proxy/${agent}`]) {
        const res = await call("POST", path, toolCall("echo"), {
          ...headers,
          "mcp-name": "echo",
          [name]: value,
        });
        expect(res.status).toBe(400);
        expect(res.json).toEqual(headerMismatch(2, name === "mcp-name" ? "Mcp-Name" : "Mcp-Method"));
        expect(res.headers.get("x-gateway-invocation-id")).toBeNull();
      }
    }
    expect(upstream.requests.length).toBe(before);
  });

  it("refuses a 2026-07-28 request without Mcp-Method, or without the Mcp-Name its body names, with -32020 on both paths", async () => {
    const upstream = await mcpUpstream({ jsonResponse: true });
    const agent = await mcpAgent(upstream.url);
    const meta = {
      "io.modelcontextprotocol/protocolVersion": "2026-07-28",
      "io.modelcontextprotocol/clientCapabilities": {},
    };
    const modern = { ...MCP_HEADERS, "mcp-protocol-version": "2026-07-28" };
    const rpc = (method: string, params: Record<string, unknown>) =>
      JSON.stringify({ jsonrpc: "2.0", id: 11, method, params: { ...params, _meta: meta } });
    const paths = [`/v1/proxy/${agent}/stream`, `/v1/proxy/${agent}`];
    const before = upstream.requests.length;
    for (const [method, params, headers, missing] of [
      ["tools/list", {}, modern, "Mcp-Method"],
      // The envelope alone makes it a request of 2026-07-28.
      ["tools/list", {}, MCP_HEADERS, "Mcp-Method"],
      [
        "tools/call",
        { name: "echo", arguments: { text: "x" } },
        { ...modern, "mcp-method": "tools/call" },
        "Mcp-Name",
      ],
      ["prompts/get", { name: "greet" }, { ...modern, "mcp-method": "prompts/get" }, "Mcp-Name"],
      ["resources/read", { uri: "file:///a.txt" }, { ...modern, "mcp-method": "resources/read" }, "Mcp-Name"],
      ["tasks/get", { taskId: "task-1" }, { ...modern, "mcp-method": "tasks/get" }, "Mcp-Name"],
    ] as const) {
      for (const path of paths) {
        const res = await call("POST", path, rpc(method, params), headers);
        expect(res.status, `${method} ${path}`).toBe(400);
        expect(res.json).toEqual(headerMismatch(11, missing));
        expect(res.headers.get("x-gateway-invocation-id")).toBeNull();
      }
    }
    // A name in the Base64 form is decoded before it is compared; one that does not decode is refused.
    const tool = rpc("tools/call", { name: "echo", arguments: { text: "x" } });
    const named = { ...modern, "mcp-method": "tools/call" };
    const bad = await call("POST", paths[0] as string, tool, { ...named, "mcp-name": "=?base64?ZWNobw?=" });
    expect(bad.json).toEqual(headerMismatch(11, "Mcp-Name"));
    expect(upstream.requests.length).toBe(before);

    const encoded = await call("POST", paths[0] as string, tool, {
      ...named,
      "mcp-name": "=?base64?ZWNobw==?=",
    });
    expect(encoded.headers.get("x-gateway-invocation-id")).toMatch(/^inv_/);
    expect(upstream.requests.length).toBe(before + 1);
    // A request of an older revision sends neither header: forwarded.
    const older = await call(
      "POST",
      paths[0] as string,
      JSON.stringify({ jsonrpc: "2.0", id: 12, method: "tools/list" }),
      {
        ...MCP_HEADERS,
        "mcp-protocol-version": "2025-06-18",
      },
    );
    expect(older.headers.get("x-gateway-invocation-id")).toMatch(/^inv_/);
    expect(upstream.requests.length).toBe(before + 2);
  });

  it("checks Mcp-Name against params.taskId for tasks/*, forwards it unchecked for methods whose name it cannot place", async () => {
    const upstream = await mcpUpstream({ jsonResponse: true });
    const agent = await mcpAgent(upstream.url);
    const init = await call(
      "POST",
      `/v1/proxy/${agent}/stream`,
      JSON.stringify(mcpInitialize()),
      MCP_HEADERS,
    );
    const headers = { ...MCP_HEADERS, "mcp-session-id": init.headers.get("mcp-session-id") ?? "" };
    const rpc = (method: string, params: Record<string, unknown>) =>
      JSON.stringify({ jsonrpc: "2.0", id: 7, method, params });

    for (const method of ["tasks/get", "tasks/update", "tasks/cancel", "vendor/future-method"]) {
      const named = method.startsWith("tasks/");
      for (const path of [`/v1/proxy/${agent}/stream`, `/v1/proxy/${agent}`]) {
        const before = upstream.requests.length;
        const res = await call("POST", path, rpc(method, { taskId: "task-1" }), {
          ...headers,
          "mcp-method": method,
          "mcp-name": "task-1",
        });
        expect(res.status, `${method} ${path}`).not.toBe(400);
        expect(res.headers.get("x-gateway-invocation-id")).toMatch(/^inv_/);
        if (res.status === 202) await pollDone(call, agent, res.json.invocation_id);
        expect(upstream.requests.length).toBe(before + 1);
        expect(upstream.requests.at(-1)?.headers["mcp-name"]).toBe("task-1");
      }
      // Mcp-Method is always checked, whatever the method.
      const wrong = await call("POST", `/v1/proxy/${agent}/stream`, rpc(method, {}), {
        ...headers,
        "mcp-method": "tasks/other",
      });
      expect(wrong.status).toBe(400);
      expect(wrong.json).toEqual(headerMismatch(7, "Mcp-Method"));
      // A task's Mcp-Name is its params.taskId (the tasks extension); another method's is not read.
      const before = upstream.requests.length;
      const other = await call("POST", `/v1/proxy/${agent}/stream`, rpc(method, { taskId: "task-1" }), {
        ...headers,
        "mcp-method": method,
        "mcp-name": "task-2",
      });
      if (named) {
        expect(other.status, method).toBe(400);
        expect(other.json).toEqual(headerMismatch(7, "Mcp-Name"));
        expect(upstream.requests.length).toBe(before);
      } else {
        expect(other.status, method).not.toBe(400);
        expect(upstream.requests.length).toBe(before + 1);
      }
    }

    // The methods whose name the gateway can place are still checked.
    for (const [method, params, good, bad] of [
      ["prompts/get", { name: "greet" }, "greet", "other"],
      ["resources/read", { uri: "file:///a.txt" }, "file:///a.txt", "file:///b.txt"],
    ] as const) {
      const before = upstream.requests.length;
      const refused = await call("POST", `/v1/proxy/${agent}/stream`, rpc(method, params), {
        ...headers,
        "mcp-name": bad,
      });
      expect(refused.status).toBe(400);
      expect(refused.json).toEqual(headerMismatch(7, "Mcp-Name"));
      expect(upstream.requests.length).toBe(before);
      const ok = await call("POST", `/v1/proxy/${agent}/stream`, rpc(method, params), {
        ...headers,
        "mcp-name": good,
      });
      expect(ok.status).not.toBe(400);
    }
  });

  it("retries a failed tools/list but never a tools/call", async () => {
    const upstream = await mcpUpstream({ failFirst: { "tools/list": 1, "tools/call": 1 } });
    const agent = await mcpAgent(upstream.url);
    const { client } = await connect(agent);

    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name)).toContain("echo");
    expect(upstream.posts("tools/list").map((r) => r.injectedFailure)).toEqual([true, false]);

    await expect(client.callTool({ name: "echo", arguments: { text: "once" } })).rejects.toMatchObject({
      code: 503,
    });
    expect(upstream.posts("tools/call").map((r) => r.injectedFailure)).toEqual([true]);

    // The failure was the upstream's, not the session's: the next call goes through.
    const echoed = await client.callTool({ name: "echo", arguments: { text: "twice" } });
    expect(echoed.content).toEqual([{ type: "text", text: "twice" }]);

    const rows = await invocationsOf(agent, 5);
    expect(rows.slice(2).map((r) => [r.mcp_method, r.status, r.error_class, r.upstream_status])).toEqual([
      ["tools/list", "succeeded", null, 200],
      ["tools/call", "failed", "upstream_5xx", 503],
      ["tools/call", "succeeded", null, 200],
    ]);
  });
});

describe("MCP on the transactional endpoint", () => {
  it("round-trips tools/call: the polled result is the JSON-RPC response with the MCP headers", async () => {
    const upstream = await mcpUpstream();
    const agent = await mcpAgent(upstream.url);
    const session = await transactSession(agent);

    const polled = await transact(
      agent,
      { jsonrpc: "2.0", id: 7, method: "tools/call", params: { name: "echo", arguments: { text: "hi" } } },
      session,
    );
    expect(polled.json).toMatchObject({
      status: "succeeded",
      mode: "transactional",
      mcp_method: "tools/call",
      mcp_tool: "echo",
      upstream_status: 200,
      response: {
        status: 200,
        headers: { "content-type": "application/json", "mcp-session-id": session["mcp-session-id"] },
      },
    });
    // The server answered with an event stream; the poller gets the one JSON-RPC response.
    expect(bodyOf(polled)).toEqual({
      jsonrpc: "2.0",
      id: 7,
      result: { content: [{ type: "text", text: "hi" }] },
    });
    const [sent] = upstream.posts("tools/call");
    expect(sent?.headers["mcp-session-id"]).toBe(session["mcp-session-id"]);
    expect(sent?.headers["mcp-protocol-version"]).toBe("2025-06-18");
    expect(sent?.headers.accept).toBe(MCP_HEADERS.accept);

    // A notification the tool sends ahead of its result is dropped from the stored answer.
    const logged = await transact(
      agent,
      {
        jsonrpc: "2.0",
        id: "l-1",
        method: "tools/call",
        params: { name: "log_echo", arguments: { text: "x" } },
      },
      session,
    );
    expect(logged.json.status).toBe("succeeded");
    expect(bodyOf(logged)).toEqual({
      jsonrpc: "2.0",
      id: "l-1",
      result: { content: [{ type: "text", text: "x" }] },
    });

    const rows = await invocationsOf(agent, 4);
    expect(rows.map((r) => [r.mode, r.mcp_method, r.mcp_tool])).toEqual([
      ["transactional", "initialize", null],
      ["transactional", "notifications/initialized", null],
      ["transactional", "tools/call", "echo"],
      ["transactional", "tools/call", "log_echo"],
    ]);
  });

  it("stores a JSON answer as it came", async () => {
    const upstream = await mcpUpstream({ jsonResponse: true });
    const agent = await mcpAgent(upstream.url);
    const session = await transactSession(agent);
    const polled = await transact(agent, { jsonrpc: "2.0", id: 1, method: "tools/list" }, session);
    expect(polled.json.response.headers["content-type"]).toMatch(/^application\/json/);
    expect(polled.json.response.headers["mcp-session-id"]).toBe(session["mcp-session-id"]);
    expect(bodyOf(polled)).toMatchObject({ jsonrpc: "2.0", id: 1, result: { tools: expect.any(Array) } });
  });

  it("retries a failed tools/list but never a tools/call", async () => {
    const upstream = await mcpUpstream({ failFirst: { "tools/list": 2, "tools/call": 1 } });
    const agent = await mcpAgent(upstream.url);
    const session = await transactSession(agent);

    const listed = await transact(agent, { jsonrpc: "2.0", id: 2, method: "tools/list" }, session);
    expect(listed.json).toMatchObject({ status: "succeeded", upstream_status: 200 });
    expect(upstream.posts("tools/list").map((r) => r.injectedFailure)).toEqual([true, true, false]);

    const called = await transact(
      agent,
      { jsonrpc: "2.0", id: 3, method: "tools/call", params: { name: "echo", arguments: { text: "a" } } },
      session,
    );
    expect(called.json).toMatchObject({
      status: "failed",
      error_class: "upstream_5xx",
      upstream_status: 503,
      response: { status: 503 },
    });
    expect(upstream.posts("tools/call")).toHaveLength(1);
  });

  it("stops reading an event stream once the response has arrived", async () => {
    let closed = false;
    const upstream = await plainUpstream((_req, res, body) => {
      const { id } = JSON.parse(body.toString("utf8")) as { id: number };
      res.writeHead(200, { "content-type": "text/event-stream", "mcp-session-id": "s-1" });
      res.write(`event: message\ndata: {"jsonrpc":"2.0","method":"notifications/progress","params":{}}\n\n`);
      res.write(`event: message\ndata: {"jsonrpc":"2.0","id":${id},"result":{"ok":true}}\n\n`);
      // Never ended by the server: the worker must not wait for the end of the stream.
      res.on("close", () => {
        closed = true;
      });
    });
    const agent = await mcpAgent(`${upstream.url}/mcp`);
    const polled = await transact(agent, { jsonrpc: "2.0", id: 5, method: "tools/list" });
    expect(polled.json).toMatchObject({
      status: "succeeded",
      response: { status: 200, headers: { "content-type": "application/json", "mcp-session-id": "s-1" } },
    });
    expect(bodyOf(polled)).toEqual({ jsonrpc: "2.0", id: 5, result: { ok: true } });
    await eventually(() => (closed ? true : undefined));
  });

  it("fails the invocation when the event stream ends without the response", async () => {
    const upstream = await plainUpstream((_req, res) => {
      res.writeHead(200, { "content-type": "text/event-stream" });
      // A response to another id, then the end of the stream.
      res.end(`data: {"jsonrpc":"2.0","id":999,"result":{}}\n\n`);
    });
    const agent = await mcpAgent(`${upstream.url}/mcp`);
    const polled = await transact(agent, {
      jsonrpc: "2.0",
      id: 1,
      method: "tools/call",
      params: { name: "echo" },
    });
    expect(polled.json).toMatchObject({
      status: "failed",
      error_class: "upstream_5xx",
      upstream_status: 200,
    });
    expect(polled.json.response).toBeUndefined();
    expect(upstream.received).toHaveLength(1);
  });
  it("fails the invocation when the event stream passes the body cap before the response", async () => {
    const chunk = `: ${"x".repeat(1 << 20)}\n`; // SSE comments: skipped events count towards the cap
    const upstream = await plainUpstream(async (_req, res) => {
      res.writeHead(200, { "content-type": "text/event-stream" });
      for (let i = 0; i < 40 && !res.destroyed; i++) {
        if (!res.write(chunk)) await drainedOrClosed(res);
      }
      res.end();
    });
    const agent = await mcpAgent(`${upstream.url}/mcp`);
    const polled = await transact(agent, { jsonrpc: "2.0", id: 1, method: "tools/list" });
    expect(polled.json).toMatchObject({ status: "failed", error_class: "internal", upstream_status: 200 });
    expect(polled.json.response).toBeUndefined();
  });
});

/** Waits for `drain` or `close`, leaving no listener behind (one per chunk would pile up). */
function drainedOrClosed(res: ServerResponse): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      res.off("drain", done).off("close", done);
      resolve();
    };
    res.once("drain", done).once("close", done);
  });
}

describe("bodies that are not one JSON-RPC 2.0 message", () => {
  const secret = "do-not-echo-me";
  const bad: Array<[string, string]> = [
    ["a batch", JSON.stringify([{ jsonrpc: "2.0", id: 1, method: "tools/list", params: { secret } }])],
    ["not JSON", `{"jsonrpc":"2.0","id":1,"method":"tools/list",${secret}`],
    ["jsonrpc 1.0", JSON.stringify({ jsonrpc: "1.0", id: 1, method: "tools/list", params: { secret } })],
    [
      "tools/call without a name",
      JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { secret } }),
    ],
  ];

  it.each(bad)("%s → 400 on both endpoints, no invocation, nothing forwarded", async (_name, body) => {
    const upstream = await mcpUpstream();
    const agent = await mcpAgent(upstream.url);
    for (const path of [`/v1/proxy/${agent}`, `/v1/proxy/${agent}/stream`]) {
      const res = await call("POST", path, body, MCP_HEADERS);
      expect(res.status).toBe(400);
      expect(Object.keys(res.json)).toEqual(["error"]);
      expect(typeof res.json.error).toBe("string");
      expect(res.text).not.toContain(secret);
      expect(res.headers.get("x-gateway-invocation-id")).toBeNull();
    }
    const list = await call("GET", `/v1/invocations?agent_id=${agent}`);
    expect(list.json.data).toEqual([]);
    expect(upstream.requests).toEqual([]);
  });
});
