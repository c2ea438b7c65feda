// @stores both: search reads the tool catalog and policy the store holds; records and decisions are asserted.
import { type McpV1Server, SEARCH_CASES, startMcpV1Server, type TestApp, TOOL_CORPUS } from "@gw/testkit";
import {
  Client as ClientV2,
  StreamableHTTPClientTransport as TransportV2,
} from "@modelcontextprotocol/client";
import { Client as ClientV1 } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport as TransportV1 } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Caller, caller, recordDone, startGateway } from "../helpers.ts";
import { connectV2, memberAgent, memberPool, rpc, stream, transact, virtualAgent } from "./fixture.ts";

// Tool search on virtual servers (docs/mcp.md): three official-SDK members holding 306 tools
// (two v2 members of revision 2026-07-28, one SDK 1.x member), a search-mode virtual server in
// front of them, and the official clients of both SDK generations through it.

const SECRET = "search-test-session-secret-0123456789abcdef";
const FAST = { rate_limit: { rps: 100_000, burst: 100_000 } };
let gw: TestApp;
let call: Caller;
const pool = memberPool();
let data: McpV1Server;
let ids: { dev: string; comms: string; data: string };

/** A search-mode virtual server over the three members for this caller's tenant. */
async function searchServer(who: Caller): Promise<string> {
  const dev = await memberAgent(who, urls.dev);
  const comms = await memberAgent(who, urls.comms);
  const dat = await memberAgent(who, urls.data);
  if (who === call) ids = { dev, comms, data: dat };
  return virtualAgent(
    who,
    [
      { agent_id: dev, prefix: "dev" },
      { agent_id: comms, prefix: "comms" },
      { agent_id: dat, prefix: "data" },
    ],
    { ...FAST, tool_discovery: "search" },
  );
}
const urls = { dev: "", comms: "", data: "" };
let v: string;

beforeAll(async () => {
  gw = await startGateway({ GW_MCP_SESSION_SECRET: SECRET });
  call = await caller(gw);
  urls.dev = (await pool.v2("dev", { tools: [], prompts: [], definitions: TOOL_CORPUS.dev })).url;
  urls.comms = (await pool.v2("comms", { tools: [], prompts: [], definitions: TOOL_CORPUS.comms })).url;
  data = await startMcpV1Server({ name: "data", mode: "stateless", definitions: TOOL_CORPUS.data });
  pool.add(data);
  urls.data = data.url;
  v = await searchServer(call);
});
afterAll(async () => {
  await pool.closeAll();
  await gw?.close();
});

type Found = { name: string; description?: string; inputSchema: Record<string, unknown> };
type ToolResult = {
  content: Array<{ type: string; text: string }>;
  structuredContent?: { tools: Found[] };
  isError?: boolean;
};

async function v1Client(agentId = v, who = call): Promise<ClientV1> {
  const client = new ClientV1({ name: "sdk1", version: "1.0.0" });
  await client.connect(
    new TransportV1(new URL(`${gw.url}/v1/proxy/${agentId}/stream`), {
      requestInit: { headers: { Authorization: `Bearer ${who.token}` } },
    }),
  );
  return client;
}

async function v2Default(agentId = v, who = call): Promise<ClientV2> {
  const client = new ClientV2({ name: "sdk2", version: "1.0.0" });
  await client.connect(
    new TransportV2(new URL(`${gw.url}/v1/proxy/${agentId}/stream`), {
      requestInit: { headers: { Authorization: `Bearer ${who.token}` } },
    }),
  );
  return client;
}

async function allTools(client: ClientV2): Promise<string[]> {
  const out: string[] = [];
  let cursor: string | undefined;
  do {
    const page = await client.listTools(cursor ? { cursor } : {});
    out.push(...page.tools.map((t) => t.name));
    cursor = page.nextCursor;
  } while (cursor);
  return out;
}

const names = (r: unknown) => ((r as ToolResult).structuredContent?.tools ?? []).map((t) => t.name);

describe("tool search: the official clients of both generations", () => {
  it("lists only search_tools and call_tool, to the v2 client (2026-07-28) and the SDK 1.x client", async () => {
    const v2 = await connectV2(gw, call, v);
    const listed = await v2.listTools();
    expect(listed.tools.map((t) => t.name)).toEqual(["search_tools", "call_tool"]);
    expect(listed.tools[0]?.inputSchema).toMatchObject({ required: ["query"] });
    await v2.close();
    const v1 = await v1Client();
    expect((await v1.listTools()).tools.map((t) => t.name)).toEqual(["search_tools", "call_tool"]);
    await v1.close();
    // The gateway's own list is not learned as the server's tools: the catalog holds no such tool.
    const catalog = await call("GET", `/v1/agents/${v}/tools`);
    expect(catalog.json.data.map((t: { name: string }) => t.name)).not.toContain("search_tools");
  });

  it("finds the intended tool in the top 5 for at least 90 % of 25 realistic queries", async () => {
    const v2 = await connectV2(gw, call, v);
    let hits = 0;
    const missed: string[] = [];
    for (const [query, want] of SEARCH_CASES) {
      const r = (await v2.callTool({ name: "search_tools", arguments: { query, limit: 5 } })) as ToolResult;
      expect(r.isError ?? false).toBe(false);
      const found = r.structuredContent?.tools ?? [];
      expect(found.length).toBeLessThanOrEqual(5);
      // The same JSON as text, for clients that read only the content.
      expect(JSON.parse(r.content[0]?.text ?? "null")).toEqual(r.structuredContent);
      if (found.some((t) => t.name === want)) hits++;
      else missed.push(query);
    }
    expect(SEARCH_CASES).toHaveLength(25);
    expect(hits / SEARCH_CASES.length, missed.join(" | ")).toBeGreaterThanOrEqual(0.9);
    // The members were listed once, on the gateway's behalf: the catalog holds all 306 tools (and
    // the SDK 1.x member's own echo and slow_echo).
    const catalog = await call("GET", `/v1/agents/${v}/tools`);
    expect(catalog.json.data).toHaveLength(308);
    await v2.close();
  });

  it("answers each found tool with its exposed name, description and input schema", async () => {
    const v1 = await v1Client();
    const r = (await v1.callTool({
      name: "search_tools",
      arguments: { query: "weather forecast" },
    })) as ToolResult;
    const top = r.structuredContent?.tools[0];
    expect(top).toEqual({
      name: "data__get_weather_forecast",
      description: expect.stringContaining("weather forecast"),
      inputSchema: expect.objectContaining({
        type: "object",
        properties: expect.objectContaining({ location: expect.anything() }),
      }),
    });
    // At most `limit`, default 10.
    const many = (await v1.callTool({ name: "search_tools", arguments: { query: "create" } })) as ToolResult;
    expect(names(many)).toHaveLength(10);
    const one = (await v1.callTool({
      name: "search_tools",
      arguments: { query: "create", limit: 1 },
    })) as ToolResult;
    expect(names(one)).toEqual([names(many)[0]]);
    await v1.close();
  });

  it("serves call_tool as the tools/call of that tool, through members of either generation", async () => {
    const v2 = await v2Default();
    const viaCall = (await v2.callTool({
      name: "call_tool",
      arguments: { name: "dev__create_issue", arguments: { owner: "o", repo: "r", title: "Login crash" } },
    })) as ToolResult;
    expect(viaCall.content[0]?.text).toBe('dev:create_issue:{"owner":"o","repo":"r","title":"Login crash"}');
    const direct = (await v2.callTool({
      name: "dev__create_issue",
      arguments: { owner: "o", repo: "r", title: "Login crash" },
    })) as ToolResult;
    expect(direct.content).toEqual(viaCall.content);
    await v2.close();
    const v1 = await v1Client();
    const old = (await v1.callTool({
      name: "call_tool",
      arguments: { name: "data__convert_currency", arguments: { amount: 100, from: "USD", to: "EUR" } },
    })) as ToolResult;
    expect(old.content[0]?.text).toBe('data:convert_currency:{"amount":100,"from":"USD","to":"EUR"}');
    await v1.close();
  });

  it("records call_tool with the exposed tool's name and the member that served it, on both paths", async () => {
    const req = rpc(
      "tools/call",
      { name: "call_tool", arguments: { name: "comms__send_sms", arguments: { to: "+1", text: "hi" } } },
      9,
    );
    const res = await stream(call, v, req);
    expect(res.status).toBe(200);
    expect(res.json.result.content[0].text).toBe('comms:send_sms:{"to":"+1","text":"hi"}');
    const record = await recordDone(call, res.headers.get("x-gateway-invocation-id") as string);
    expect(record.json).toMatchObject({
      mcp_method: "tools/call",
      mcp_tool: "comms__send_sms",
      routed_agent_id: ids.comms,
      upstream_status: 200,
    });
    const t = await transact(call, v, req);
    expect(t.accepted.status).toBe(202);
    expect(t.body.result.content[0].text).toBe('comms:send_sms:{"to":"+1","text":"hi"}');
    expect(t.polled?.json).toMatchObject({ mcp_tool: "comms__send_sms", routed_agent_id: ids.comms });
    // search_tools itself is recorded as the gateway's answer: no member reached.
    const s = await stream(
      call,
      v,
      rpc("tools/call", { name: "search_tools", arguments: { query: "sms" } }, 10),
    );
    expect(s.json.result.structuredContent.tools[0].name).toBe("comms__send_sms");
    const sr = await recordDone(call, s.headers.get("x-gateway-invocation-id") as string);
    expect(sr.json).toMatchObject({ mcp_tool: "search_tools", upstream_status: null, routed_agent_id: null });
    const ts = await transact(
      call,
      v,
      rpc("tools/call", { name: "search_tools", arguments: { query: "sms" } }, 11),
    );
    expect(ts.body.result.structuredContent.tools[0].name).toBe("comms__send_sms");
  });
});

describe("tool search: refusals in MCP's shape", () => {
  it("an unknown name through call_tool is -32602, as tools/call of it is", async () => {
    const viaCall = await stream(
      call,
      v,
      rpc("tools/call", { name: "call_tool", arguments: { name: "dev__no_such_tool", arguments: {} } }, 3),
    );
    const direct = await stream(call, v, rpc("tools/call", { name: "dev__no_such_tool", arguments: {} }, 3));
    // The member names the tool unknown in its own words (the routed call reached it).
    expect(viaCall.status).toBe(200);
    expect(viaCall.json).toMatchObject({ jsonrpc: "2.0", id: 3, error: { code: -32602 } });
    expect(viaCall.json).toEqual(direct.json);
    const record = await recordDone(call, viaCall.headers.get("x-gateway-invocation-id") as string);
    expect(record.json).toMatchObject({ mcp_tool: "dev__no_such_tool", routed_agent_id: ids.dev });
    // A name no member owns: the gateway's -32602, nothing reached, as tools/call of it.
    const nowhere = await stream(
      call,
      v,
      rpc("tools/call", { name: "call_tool", arguments: { name: "nowhere__tool", arguments: {} } }, 5),
    );
    const nowhereDirect = await stream(call, v, rpc("tools/call", { name: "nowhere__tool" }, 5));
    expect(nowhere.json).toEqual({
      jsonrpc: "2.0",
      id: 5,
      error: { code: -32602, message: "Tool nowhere__tool not found" },
    });
    expect(nowhereDirect.json).toEqual(nowhere.json);
    const own = await recordDone(call, nowhere.headers.get("x-gateway-invocation-id") as string);
    expect(own.json).toMatchObject({
      mcp_tool: "nowhere__tool",
      upstream_status: null,
      routed_agent_id: null,
    });
  });

  it("bad arguments are the revision's invalid-params error, on both paths", async () => {
    const cases: Array<[string, unknown, RegExp]> = [
      ["search_tools", { query: "" }, /query must not be empty/],
      ["search_tools", { query: "x".repeat(513) }, /at most 512 characters/],
      ["search_tools", { query: "email", limit: 0 }, /limit must be an integer from 1 to 50/],
      ["search_tools", { query: "email", limit: 51 }, /limit must be an integer from 1 to 50/],
      ["search_tools", { limit: 5 }, /query must be a string/],
      ["call_tool", { name: "dev__create_issue", arguments: "owner=o" }, /arguments must be an object/],
      ["call_tool", { name: "dev__create_issue", arguments: [1, 2] }, /arguments must be an object/],
      ["call_tool", { arguments: {} }, /name must be a tool name/],
    ];
    for (const [name, args, message] of cases) {
      const req = rpc("tools/call", { name, arguments: args }, 4);
      const res = await stream(call, v, req);
      expect(res.status, JSON.stringify(args)).toBe(200);
      expect(res.json).toMatchObject({ jsonrpc: "2.0", id: 4, error: { code: -32602 } });
      expect(res.json.error.message).toMatch(message);
      const t = await transact(call, v, req);
      expect(t.body).toMatchObject({
        id: 4,
        error: { code: -32602, message: expect.stringMatching(message) },
      });
    }
    // The official client gets them as errors too.
    const v2 = await connectV2(gw, call, v);
    await expect(v2.callTool({ name: "search_tools", arguments: { query: "" } })).rejects.toThrow(
      /query must not be empty/,
    );
    await v2.close();
  });
});

describe("tool search: per caller", () => {
  it("a denied tool never appears, and call_tool on it is refused as tools/call is; decisions name it", async () => {
    const who = await caller(gw);
    const vs = await searchServer(who);
    const put = await who("PUT", "/v1/policy", {
      rules: [
        {
          action: "deny",
          match: { methods: ["tools/call"], tools: ["comms__send_email", "data__refund_*"] },
        },
        // The usual rule on unknown and drifted tools leaves the gateway's own tools callable.
        { action: "deny", match: { methods: ["tools/call"], tool_status: ["drifted", "unknown"] } },
      ],
    });
    expect(put.status).toBe(200);
    const v2 = await connectV2(gw, who, vs);
    expect((await v2.listTools()).tools.map((t) => t.name)).toEqual(["search_tools", "call_tool"]);
    for (const query of ["send an email to my manager", "email", "refund the payment", "send"]) {
      for (const limit of [5, 50]) {
        const r = await v2.callTool({ name: "search_tools", arguments: { query, limit } });
        const found = names(r);
        expect(found.length).toBeGreaterThan(0);
        expect(found).not.toContain("comms__send_email");
        expect(found.filter((n) => n.startsWith("data__refund_"))).toEqual([]);
      }
    }
    await v2.close();
    const v1 = await v1Client(vs, who);
    expect(
      names(await v1.callTool({ name: "search_tools", arguments: { query: "send email" } })),
    ).not.toContain("comms__send_email");
    await v1.close();
    // call_tool on it: the same refusal as tools/call of it, decided on the exposed name.
    const args = { to: ["a@example.com"], subject: "s", body: "b" };
    const viaCall = await stream(
      who,
      vs,
      rpc("tools/call", { name: "call_tool", arguments: { name: "comms__send_email", arguments: args } }),
    );
    const direct = await stream(who, vs, rpc("tools/call", { name: "comms__send_email", arguments: args }));
    expect(viaCall.status).toBe(403);
    expect(viaCall.json).toEqual({ error: "denied by policy" });
    expect(direct.status).toBe(viaCall.status);
    expect(direct.json).toEqual(viaCall.json);
    const decisions = await who("GET", "/v1/policy/decisions?action=deny&limit=10");
    expect(decisions.json.data.slice(0, 2)).toMatchObject([
      { mcp_tool: "comms__send_email", matched_rule: "1" },
      { mcp_tool: "comms__send_email", matched_rule: "1" },
    ]);
    // An allowed call_tool's decision names the exposed tool too.
    const ok = await stream(
      who,
      vs,
      rpc("tools/call", {
        name: "call_tool",
        arguments: { name: "comms__send_sms", arguments: { to: "+1", text: "x" } },
      }),
    );
    expect(ok.status).toBe(200);
    await expect
      .poll(
        async () =>
          (await who("GET", "/v1/policy/decisions?action=allow&limit=10")).json.data.map(
            (d: { mcp_tool: string }) => d.mcp_tool,
          ),
        { timeout: 10_000 },
      )
      .toContain("comms__send_sms");
  });

  it("call_tool is held for approval as tools/call is, bound to the same tool and arguments", async () => {
    const who = await caller(gw);
    const approver = await caller(gw, ["approvals:decide"], who.tenant);
    const vs = await searchServer(who);
    await who("PUT", "/v1/policy", {
      rules: [{ action: "require_approval", match: { tools: ["data__refund_payment"] } }],
    });
    const args = { charge: "ch_1", amount: 500 };
    // Held tools stay listed: the caller may still call them.
    const v2 = await connectV2(gw, who, vs);
    expect(
      names(await v2.callTool({ name: "search_tools", arguments: { query: "refund a charge" } })),
    ).toContain("data__refund_payment");
    await v2.close();
    const viaCall = () =>
      stream(
        who,
        vs,
        rpc("tools/call", {
          name: "call_tool",
          arguments: { name: "data__refund_payment", arguments: args },
        }),
      );
    const held = await viaCall();
    expect(held.status).toBe(403);
    expect(held.json).toMatchObject({
      error: "approval required",
      approval_id: expect.stringMatching(/^apr_/),
    });
    // The direct tools/call of the same tool and arguments is the same pending approval.
    const direct = await stream(
      who,
      vs,
      rpc("tools/call", { name: "data__refund_payment", arguments: args }),
    );
    expect(direct.json.approval_id).toBe(held.json.approval_id);
    const approval = await who("GET", `/v1/approvals/${held.json.approval_id}`);
    expect(approval.json).toMatchObject({
      mcp_method: "tools/call",
      mcp_tool: "data__refund_payment",
      arguments: args,
    });
    expect((await approver("POST", `/v1/approvals/${held.json.approval_id}/approve`, {})).status).toBe(200);
    const passed = await viaCall();
    expect(passed.status).toBe(200);
    expect(passed.json.result.content[0].text).toBe('data:refund_payment:{"charge":"ch_1","amount":500}');
    // Single use: the next identical call is held again.
    expect((await viaCall()).status).toBe(403);
  });

  it("call_tool counts against the tool's quota and its answer is judged by the answer rules, as tools/call", async () => {
    const who = await caller(gw);
    const vs = await searchServer(who);
    const put = await who("PUT", "/v1/policy", {
      rules: [{ action: "limit", match: { tools: ["comms__send_sms"] }, limit: { requests: 2, per: "day" } }],
      answer_rules: [{ detect: { pii: ["email"] }, action: "redact" }],
    });
    expect(put.status, put.text).toBe(200);
    const sms = { to: "+1", text: "write to bob@example.com" };
    const viaCall = () =>
      stream(
        who,
        vs,
        rpc("tools/call", { name: "call_tool", arguments: { name: "comms__send_sms", arguments: sms } }),
      );
    const first = await viaCall();
    expect(first.status).toBe(200);
    expect(first.json.result.content[0].text).toBe(
      'comms:send_sms:{"to":"+1","text":"write to [redacted:email]"}',
    );
    const direct = await stream(who, vs, rpc("tools/call", { name: "comms__send_sms", arguments: sms }));
    expect(direct.status).toBe(200);
    expect(direct.json.result.content).toEqual(first.json.result.content);
    // One counter for both spellings of the call: the third is refused.
    const third = await viaCall();
    expect(third.status).toBe(429);
    expect(typeof third.json.error).toBe("string");
    // Another tool is not counted.
    const other = await stream(
      who,
      vs,
      rpc("tools/call", {
        name: "call_tool",
        arguments: { name: "comms__translate_text", arguments: { text: "x", target_language: "fr" } },
      }),
    );
    expect(other.status).toBe(200);
  });

  it("call_tool of a priced tool is charged that tool's price, as tools/call is", async () => {
    const who = await caller(gw);
    const vs = await searchServer(who);
    const price = {
      amount: "1000",
      asset: "USDC",
      network: "base-sepolia",
      pay_to: "0x1111111111111111111111111111111111111111",
      tools: { dev__create_issue: "7000" },
    };
    expect((await who("PATCH", `/v1/agents/${vs}`, { price })).status).toBe(200);
    const args = { owner: "o", repo: "r", title: "t" };
    const amountOf = (r: { json: { accepts?: Array<{ maxAmountRequired: string }> } }) =>
      r.json.accepts?.[0]?.maxAmountRequired;
    await expect
      .poll(async () => {
        const r = await stream(
          who,
          vs,
          rpc("tools/call", { name: "call_tool", arguments: { name: "dev__create_issue", arguments: args } }),
        );
        return [r.status, amountOf(r)];
      })
      .toEqual([402, "7000"]);
    const direct = await stream(who, vs, rpc("tools/call", { name: "dev__create_issue", arguments: args }));
    expect([direct.status, amountOf(direct)]).toEqual([402, "7000"]);
    const search = await stream(
      who,
      vs,
      rpc("tools/call", { name: "search_tools", arguments: { query: "issue" } }),
    );
    expect([search.status, amountOf(search)]).toEqual([402, "1000"]);
  });

  it("tool_status rules apply to results: with unpinned tools denied, only pinned ones are found", async () => {
    const who = await caller(gw);
    const vs = await searchServer(who);
    const v2 = await connectV2(gw, who, vs);
    // The first search lists the members; then one tool is pinned.
    expect(
      names(await v2.callTool({ name: "search_tools", arguments: { query: "pull request" } })),
    ).toContain("dev__merge_pull_request");
    const pinned = await who("POST", `/v1/agents/${vs}/tools/pin`, { tools: ["dev__merge_pull_request"] });
    expect(pinned.json).toEqual({ pinned: ["dev__merge_pull_request"] });
    await who("PUT", "/v1/policy", {
      rules: [
        {
          action: "deny",
          match: { methods: ["tools/call"], tool_status: ["unpinned", "drifted", "unknown"] },
        },
      ],
    });
    await expect
      .poll(
        async () =>
          names(await v2.callTool({ name: "search_tools", arguments: { query: "pull request", limit: 50 } })),
        {
          timeout: 10_000,
        },
      )
      .toEqual(["dev__merge_pull_request"]);
    // A policy that denies search_tools itself takes it out of the list, and refuses it.
    await who("PUT", "/v1/policy", { rules: [{ action: "deny", match: { tools: ["search_tools"] } }] });
    await expect
      .poll(async () => (await v2.listTools()).tools.map((t) => t.name), { timeout: 10_000 })
      .toEqual(["call_tool"]);
    const refused = await stream(
      who,
      vs,
      rpc("tools/call", { name: "search_tools", arguments: { query: "x" } }),
    );
    expect(refused.status).toBe(403);
    await v2.close();
  });

  it("another tenant's search-mode server is 404, and a list-mode server still lists every tool", async () => {
    const other = await caller(gw);
    const res = await stream(
      other,
      v,
      rpc("tools/call", { name: "search_tools", arguments: { query: "email" } }),
    );
    expect(res.status).toBe(404);
    expect(res.json).toEqual({ error: "agent not found" });
    const listMode = await call("PATCH", `/v1/agents/${v}`, { tool_discovery: "list" });
    expect(listMode.status).toBe(200);
    try {
      const v2 = await connectV2(gw, call, v);
      await expect.poll(async () => (await allTools(v2)).length, { timeout: 10_000 }).toBe(308);
      await v2.close();
    } finally {
      await call("PATCH", `/v1/agents/${v}`, { tool_discovery: "search" });
    }
  });
});

describe("tool search: trying a search on the catalog (the console's box)", () => {
  it("ranks the catalog for a query with each tool's status; bad bodies 400, other tenants 404", async () => {
    // An agent's search fills the catalog (members listed once, on the gateway's behalf).
    await stream(call, v, rpc("tools/call", { name: "search_tools", arguments: { query: "weather" } }));
    const res = await call("POST", `/v1/agents/${v}/tools/search`, {
      query: "will it rain tomorrow",
      limit: 3,
    });
    expect(res.status).toBe(200);
    expect(res.json.data.length).toBeGreaterThan(0);
    expect(res.json.data.length).toBeLessThanOrEqual(3);
    expect(res.json.data[0]).toEqual({
      name: "data__get_weather_forecast",
      status: "unpinned",
      description: expect.stringContaining("weather forecast"),
      input_schema: expect.objectContaining({ type: "object" }),
    });
    const dflt = await call("POST", `/v1/agents/${v}/tools/search`, { query: "create" });
    expect(dflt.json.data).toHaveLength(10);
    const directions = await call("POST", `/v1/agents/${v}/tools/search`, { query: "directions", limit: 50 });
    expect(directions.json.data.map((t: { name: string }) => t.name)).toContain("data__get_directions");
    for (const bad of [
      {},
      { query: "" },
      { query: " " },
      { query: "x".repeat(513) },
      { query: "a", limit: 0 },
      { query: "a", limit: 51 },
      { query: "a", extra: 1 },
    ]) {
      const r = await call("POST", `/v1/agents/${v}/tools/search`, bad);
      expect(r.status, JSON.stringify(bad)).toBe(400);
      expect(typeof r.json.error).toBe("string");
    }
    const other = await caller(gw);
    const foreign = await other("POST", `/v1/agents/${v}/tools/search`, { query: "email" });
    expect(foreign.status).toBe(404);
    expect(foreign.json).toEqual({ error: "agent not found" });
    const plain = await other("POST", "/v1/agents", { name: "h", upstream_url: "https://api.example.com" });
    const notMcp = await other("POST", `/v1/agents/${plain.json.id}/tools/search`, { query: "email" });
    expect(notMcp.status).toBe(400);
  });
});
