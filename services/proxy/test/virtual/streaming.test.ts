// @stores once: the MCP protocol through a virtual server.
import type { TestApp } from "@gw/testkit";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { type Caller, caller, recordDone, startGateway } from "../helpers.ts";
import { connectV2, memberAgent, memberPool, virtualAgent } from "./fixture.ts";

// A virtual MCP server on the streaming path: official v2 SDK servers as members, the official
// v2 client as the caller, the real gateway in between.

let gw: TestApp;
let call: Caller;
const pool = memberPool();

beforeAll(async () => {
  gw = await startGateway();
  call = await caller(gw);
});
afterEach(() => pool.closeAll());
afterAll(() => gw?.close());

describe("virtual MCP server: streaming path with the v2 SDK", () => {
  it("discovers, lists merged tools with prefixes and routes tools/call to the member by prefix", async () => {
    const alpha = await pool.v2("alpha");
    const beta = await pool.v2("beta", { tools: ["echo", "secret_drop", "search"] });
    const a = await memberAgent(call, alpha.url);
    const b = await memberAgent(call, beta.url);
    const v = await virtualAgent(call, [
      { agent_id: a, prefix: "" },
      { agent_id: b, prefix: "beta", exclude: ["secret_*"] },
    ]);
    const client = await connectV2(gw, call, v);
    pool.add(client);
    expect(client.getServerVersion()).toMatchObject({ name: "portal" });
    expect(client.getServerCapabilities()?.tools).toBeDefined();
    const tools = await client.listTools();
    expect(tools.tools.map((t) => t.name)).toEqual(["echo", "add", "beta__echo", "beta__search"]);
    const res = await client.callTool({ name: "beta__echo", arguments: { text: "hi" } });
    expect(res.content).toEqual([{ type: "text", text: "beta:echo:hi" }]);
    const own = await client.callTool({ name: "echo", arguments: { text: "yo" } });
    expect(own.content).toEqual([{ type: "text", text: "alpha:echo:yo" }]);
    // The member got its own name, in the body and in Mcp-Name.
    const routed = beta.requests.find((r) => r.rpcMethod === "tools/call");
    expect(routed?.name).toBe("echo");
    expect(routed?.headers["mcp-name"]).toBe("echo");
    // An excluded tool and an unknown prefix are unknown names: -32602.
    await expect(client.callTool({ name: "beta__secret_drop", arguments: {} })).rejects.toMatchObject({
      code: -32602,
    });
    await expect(client.callTool({ name: "nope__echo", arguments: {} })).rejects.toMatchObject({
      code: -32602,
    });
    expect(beta.requests.filter((r) => r.rpcMethod === "tools/call")).toHaveLength(1);
  });

  it("records one invocation per request on the virtual agent, with routed_agent_id for a routed call", async () => {
    const alpha = await pool.v2("alpha");
    const a = await memberAgent(call, alpha.url);
    const v = await virtualAgent(call, [{ agent_id: a, prefix: "al" }]);
    const client = await connectV2(gw, call, v);
    pool.add(client);
    await client.callTool({ name: "al__add", arguments: { text: "x" } });
    await client.listTools();
    const list = await call("GET", `/v1/invocations?agent_id=${v}&limit=100`);
    const rows = list.json.data as Array<Record<string, unknown>>;
    const calls = rows.filter((r) => r.mcp_method === "tools/call");
    expect(calls).toHaveLength(1);
    const routed = await recordDone(call, calls[0]?.id as string);
    expect(routed.json).toMatchObject({
      agent_id: v,
      mcp_tool: "al__add",
      routed_agent_id: a,
      status: "succeeded",
    });
    const listed = rows.find((r) => r.mcp_method === "tools/list");
    const fanout = await recordDone(call, listed?.id as string);
    expect(fanout.json).toMatchObject({ agent_id: v, routed_agent_id: null, status: "succeeded" });
    // The member's own agent has no invocation: the call is the virtual agent's.
    expect((await call("GET", `/v1/invocations?agent_id=${a}`)).json.total).toBe(0);
  });

  it("merges prompts, resources and templates, reads the first member that has a resource, routes completions", async () => {
    const alpha = await pool.v2("alpha");
    const beta = await pool.v2("beta");
    const a = await memberAgent(call, alpha.url);
    const b = await memberAgent(call, beta.url);
    const v = await virtualAgent(call, [
      { agent_id: a, prefix: "a" },
      { agent_id: b, prefix: "b" },
    ]);
    const client = await connectV2(gw, call, v);
    pool.add(client);
    expect((await client.listPrompts()).prompts.map((p) => p.name)).toEqual(["a__greet", "b__greet"]);
    const prompt = await client.getPrompt({ name: "b__greet", arguments: { who: "bob" } });
    expect(prompt.messages[0]?.content).toEqual({ type: "text", text: "beta:greet:bob" });
    expect((await client.listResources()).resources.map((r) => r.uri)).toEqual([
      "alpha://readme",
      "beta://readme",
    ]);
    const templates = await client.listResourceTemplates();
    expect(templates.resourceTemplates.map((t) => t.uriTemplate)).toEqual([
      "alpha://items/{id}",
      "beta://items/{id}",
    ]);
    const read = await client.readResource({ uri: "beta://items/7" });
    expect(read.contents).toEqual([{ uri: "beta://items/7", text: "beta item 7" }]);
    const completed = await client.complete({
      ref: { type: "ref/resource", uri: "beta://items/{id}" },
      argument: { name: "id", value: "1" },
    });
    expect(completed.completion.values).toEqual(["1", "10"]);
  });
});
