// @stores once: the MCP protocol through a virtual server.
import { sessionsOf } from "@gw/forward";
import { type McpV1Server, startMcpV1Server, type TestApp } from "@gw/testkit";
import {
  Client as ClientV2,
  StreamableHTTPClientTransport as TransportV2,
} from "@modelcontextprotocol/client";
import { Client as ClientV1 } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport as TransportV1 } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Caller, caller, recordDone, startGateway } from "../helpers.ts";
import { connectV2, memberAgent, memberPool, rpc, stream, transact, virtualAgent } from "./fixture.ts";

// A virtual server over the MCP servers people run (docs/mcp.md, Older revisions): SDK 1.x members,
// stateful and stateless, beside a 2026-07-28 member; SDK 1.x clients and v2 clients with default
// settings through it; the gateway's own answers to older clients; the signed session ids.

const SECRET = "older-revisions-test-session-secret-0123456789";
/** The suite makes more calls than the default per-agent bucket allows. */
const FAST = { rate_limit: { rps: 100_000, burst: 100_000 } };
const OLD = { "content-type": "application/json", accept: "application/json, text/event-stream" };
let gw: TestApp;
let call: Caller;
const pool = memberPool();
let stateful: McpV1Server;
let stateless: McpV1Server;
let v: string;
let statefulId: string;

beforeAll(async () => {
  gw = await startGateway({ GW_MCP_SESSION_SECRET: SECRET });
  call = await caller(gw);
  stateful = await startMcpV1Server({ name: "alpha", mode: "stateful" });
  stateless = await startMcpV1Server({ name: "beta", mode: "stateless" });
  pool.add(stateful);
  pool.add(stateless);
  const modern = await pool.v2("gamma", { tools: ["t1"], prompts: ["hello"] });
  statefulId = await memberAgent(call, stateful.url);
  const b = await memberAgent(call, stateless.url);
  const c = await memberAgent(call, modern.url);
  v = await virtualAgent(
    call,
    [
      { agent_id: statefulId, prefix: "a" },
      { agent_id: b, prefix: "b" },
      { agent_id: c, prefix: "c" },
    ],
    FAST,
  );
});
afterAll(async () => {
  await pool.closeAll();
  await gw?.close();
});

const endpoint = () => new URL(`${gw.url}/v1/proxy/${v}/stream`);
const auth = () => ({ requestInit: { headers: { Authorization: `Bearer ${call.token}` } } });
const text = (r: object) => (r as { content: Array<{ text: string }> }).content[0]?.text;

async function initialize(protocolVersion: string, agent = v, who = call) {
  const body = {
    jsonrpc: "2.0",
    id: 1,
    method: "initialize",
    params: { protocolVersion, capabilities: {}, clientInfo: { name: "raw", version: "1" } },
  };
  const res = await who("POST", `/v1/proxy/${agent}/stream`, body, OLD);
  return { res, session: res.headers.get("mcp-session-id") as string };
}

function oldCall(session: string, method: string, params: Record<string, unknown> = {}, id = 2) {
  return call(
    "POST",
    `/v1/proxy/${v}/stream`,
    { jsonrpc: "2.0", id, method, params },
    { ...OLD, "mcp-session-id": session, "mcp-protocol-version": "2025-06-18" },
  );
}

describe("virtual MCP server: older clients and members", () => {
  it("serves the official SDK 1.x client: tools, prompts and resources of every member", async () => {
    const client = new ClientV1({ name: "sdk1", version: "1.0.0" });
    await client.connect(new TransportV1(endpoint(), auth()));
    expect(client.getServerVersion()?.name).toBe("portal");
    const tools = (await client.listTools()).tools.map((t) => t.name);
    expect(tools).toEqual(["a__echo", "a__slow_echo", "b__echo", "b__slow_echo", "c__t1"]);
    expect(text(await client.callTool({ name: "a__echo", arguments: { text: "x" } }))).toBe("alpha:echo:x");
    expect(text(await client.callTool({ name: "b__echo", arguments: { text: "y" } }))).toBe("beta:echo:y");
    expect(text(await client.callTool({ name: "c__t1", arguments: { text: "z" } }))).toBe("gamma:t1:z");
    // Progress notifications of an older member reach an older client on the call's stream.
    const progress: number[] = [];
    const slow = await client.callTool({ name: "a__slow_echo", arguments: { text: "p" } }, undefined, {
      onprogress: (p) => progress.push(p.progress),
    });
    expect(text(slow)).toBe("alpha:slow_echo:p");
    expect(progress).toEqual([1]);
    const prompts = (await client.listPrompts()).prompts.map((p) => p.name);
    expect(prompts).toEqual(["a__greet", "b__greet", "c__hello"]);
    const greet = await client.getPrompt({ name: "b__greet", arguments: { who: "ann" } });
    expect(greet.messages[0]?.content).toEqual({ type: "text", text: "beta:greet:ann" });
    const resources = (await client.listResources()).resources.map((r) => r.uri);
    expect(resources).toEqual(["alpha://readme", "beta://readme", "gamma://readme"]);
    const read = await client.readResource({ uri: "beta://readme" });
    expect(read.contents).toEqual([{ uri: "beta://readme", text: "beta readme" }]);
    await client.ping();
    await client.setLoggingLevel("debug");
    await client.close();
  });

  it("serves the v2 client with its default settings", async () => {
    const client = new ClientV2({ name: "sdk2", version: "1.0.0" });
    await client.connect(new TransportV2(endpoint(), auth()));
    const tools = (await client.listTools()).tools.map((t) => t.name);
    expect(tools).toContain("a__echo");
    expect(tools).toContain("c__t1");
    expect(text(await client.callTool({ name: "a__echo", arguments: { text: "v2" } }))).toBe("alpha:echo:v2");
    expect(text(await client.callTool({ name: "c__t1", arguments: { text: "v2" } }))).toBe("gamma:t1:v2");
    const greet = await client.getPrompt({ name: "a__greet", arguments: { who: "bo" } });
    expect(greet.messages[0]?.content).toEqual({ type: "text", text: "alpha:greet:bo" });
    const read = await client.readResource({ uri: "alpha://readme" });
    expect(read.contents[0]).toMatchObject({ text: "alpha readme" });
    await client.close();
  });

  it("serves 2026-07-28 clients from older members in that revision's shapes", async () => {
    const client = await connectV2(gw, call, v);
    expect(text(await client.callTool({ name: "a__echo", arguments: { text: "new" } }))).toBe(
      "alpha:echo:new",
    );
    await client.close();
    const listed = await stream(call, v, rpc("tools/list"));
    expect(listed.json.result).toMatchObject({ resultType: "complete", cacheScope: "private" });
    const routed = await stream(call, v, rpc("tools/call", { name: "b__echo", arguments: { text: "q" } }));
    expect(routed.json.result).toMatchObject({ resultType: "complete", content: [{ text: "beta:echo:q" }] });
    expect(routed.headers.get("mcp-session-id")).toBeNull();
    // The 2026-07-28 envelope wins over an old session id: served as before, the id never forwarded.
    const { session } = await initialize("2025-11-25");
    const before = stateful.requests.length;
    const req = rpc("tools/call", { name: "a__echo", arguments: { text: "s" } });
    const mixed = await stream(call, v, { ...req, headers: { ...req.headers, "mcp-session-id": session } });
    expect(mixed.json.result).toMatchObject({ resultType: "complete", content: [{ text: "alpha:echo:s" }] });
    expect(stateful.requests.slice(before).map((r) => r.headers["mcp-session-id"])).not.toContain(session);
  });

  it("answers initialize itself with the client's revision and a signed session id", async () => {
    for (const version of ["2025-11-25", "2025-06-18", "2025-03-26"]) {
      const { res, session } = await initialize(version);
      expect(res.status).toBe(200);
      expect(res.json.result).toMatchObject({ protocolVersion: version, serverInfo: { name: "portal" } });
      expect(res.json.result.capabilities).toMatchObject({ tools: {}, prompts: {}, resources: {} });
      expect(session).toMatch(/^[\x21-\x7e]+$/);
    }
    const unknown = await initialize("2099-01-01");
    expect(unknown.res.json.result.protocolVersion).toBe("2025-11-25");
    const { session } = await initialize("2025-06-18");
    const listed = await oldCall(session, "tools/list");
    expect(listed.status).toBe(200);
    expect(listed.json.result.tools.length).toBe(5);
    for (const key of ["resultType", "ttlMs", "cacheScope"])
      expect(listed.json.result).not.toHaveProperty(key);
    const called = await oldCall(session, "tools/call", { name: "c__t1", arguments: { text: "o" } });
    expect(called.json.result).toMatchObject({ content: [{ type: "text", text: "gamma:t1:o" }] });
    expect(called.json.result).not.toHaveProperty("resultType");
    expect((await oldCall(session, "ping")).json).toEqual({ jsonrpc: "2.0", id: 2, result: {} });
    expect((await oldCall(session, "logging/setLevel", { level: "info" })).json.result).toEqual({});
    const removed = await oldCall(session, "server/discover");
    expect(removed.json.error).toMatchObject({ code: -32601 });
    const note = await call(
      "POST",
      `/v1/proxy/${v}/stream`,
      { jsonrpc: "2.0", method: "notifications/initialized" },
      { ...OLD, "mcp-session-id": session },
    );
    expect(note.status).toBe(202);
    // An older client's GET opens its members' GET streams, merged (docs/mcp.md, Server-initiated messages).
    const get = await fetch(`${gw.url}/v1/proxy/${v}/stream`, {
      headers: {
        authorization: `Bearer ${call.token}`,
        accept: "text/event-stream",
        "mcp-session-id": session,
      },
    });
    expect(get.status).toBe(200);
    expect(get.headers.get("content-type")).toMatch(/^text\/event-stream/);
    await get.body?.cancel();
    // The transactional path: the same session, the answer for the poll.
    const t = await transact(call, v, {
      body: { jsonrpc: "2.0", id: 9, method: "tools/list", params: {} },
      headers: { ...OLD, "mcp-session-id": session },
    });
    expect(t.body.result.tools.map((x: { name: string }) => x.name)).toContain("b__echo");
    const del = await call("DELETE", `/v1/proxy/${v}/stream`, undefined, { "mcp-session-id": session });
    expect(del.status).toBe(204);
    // An ended session is refused from then on (docs/mcp.md, Older revisions).
    expect((await oldCall(session, "tools/list")).status).toBe(404);
  });

  it("records initialize, ping and a session's end it answers itself with upstream_status null", async () => {
    const recorded = async (res: { headers: Headers }) =>
      (await recordDone(call, res.headers.get("x-gateway-invocation-id") as string)).json;
    const { res, session } = await initialize("2025-11-25");
    expect(await recorded(res)).toMatchObject({
      mcp_method: "initialize",
      status: "succeeded",
      upstream_status: null,
    });
    const ping = await oldCall(session, "ping");
    expect(ping.json.result).toEqual({});
    expect(await recorded(ping)).toMatchObject({
      mcp_method: "ping",
      status: "succeeded",
      upstream_status: null,
    });
    const note = await call(
      "POST",
      `/v1/proxy/${v}/stream`,
      { jsonrpc: "2.0", method: "notifications/initialized" },
      { ...OLD, "mcp-session-id": session },
    );
    expect(note.status).toBe(202);
    expect(await recorded(note)).toMatchObject({ status: "succeeded", upstream_status: null });
    // A request the session's revision serves from the members: their status.
    const listed = await oldCall(session, "tools/list");
    expect(await recorded(listed)).toMatchObject({ status: "succeeded", upstream_status: 200 });
    const del = await call("DELETE", `/v1/proxy/${v}/stream`, undefined, { "mcp-session-id": session });
    expect(del.status).toBe(204);
    expect(await recorded(del)).toMatchObject({ status: "succeeded", upstream_status: null });
  });

  it("refuses a missing, forged, expired or other agent's session id", async () => {
    const noSession = await call(
      "POST",
      `/v1/proxy/${v}/stream`,
      { jsonrpc: "2.0", id: 3, method: "tools/list" },
      {
        ...OLD,
        "mcp-protocol-version": "2025-06-18",
      },
    );
    expect(noSession.status).toBe(400);
    expect(noSession.json).toMatchObject({ jsonrpc: "2.0", error: { code: -32000 } });
    const { session } = await initialize("2025-06-18");
    const forged = `${session.slice(0, -4)}AAAA`;
    const ids = sessionsOf({ GW_MCP_SESSION_SECRET: SECRET });
    const expired = ids.issue(
      { tenantId: call.tenant, agentId: v, revision: "2025-06-18" },
      Date.now() - 25 * 60 * 60 * 1000,
    );
    const otherAgent = await virtualAgent(call, [{ agent_id: statefulId, prefix: "z" }], FAST);
    const mine = (await initialize("2025-06-18", otherAgent)).session;
    const other = await caller(gw);
    const theirMember = await memberAgent(other, stateless.url);
    const theirs = await virtualAgent(other, [{ agent_id: theirMember, prefix: "t" }]);
    const theirSession = (await initialize("2025-06-18", theirs, other)).session;
    expect(theirSession).toBeTruthy();
    for (const bad of [forged, expired, mine, theirSession, "not-a-session"]) {
      const res = await oldCall(bad, "tools/list");
      expect(res.status, bad).toBe(404);
      expect(res.json, bad).toMatchObject({ jsonrpc: "2.0", error: { code: -32001 } });
      const del = await call("DELETE", `/v1/proxy/${v}/stream`, undefined, { "mcp-session-id": bad });
      expect(del.status, bad).toBe(404);
    }
  });

  it("pools one member session per member, opens it anew when it expires, and forgets it when the agent is written", async () => {
    const inits = () => stateful.requests.filter((r) => r.rpcMethod === "initialize").length;
    const { session } = await initialize("2025-11-25");
    await oldCall(session, "tools/call", { name: "a__echo", arguments: { text: "1" } });
    const pooled = inits();
    await oldCall(session, "tools/call", { name: "a__echo", arguments: { text: "2" } });
    await oldCall(session, "tools/list");
    expect(inits()).toBe(pooled);
    await stateful.expireSessions();
    const again = await oldCall(session, "tools/call", { name: "a__echo", arguments: { text: "3" } });
    expect(again.status).toBe(200);
    expect(JSON.stringify(again.text)).toContain("alpha:echo:3");
    expect(inits()).toBe(pooled + 1);
    const patched = await call("PATCH", `/v1/agents/${statefulId}`, { description: "written" });
    expect(patched.status).toBe(200);
    // The write reaches this process's agent cache through the change bus: the next calls see it.
    for (let i = 0; i < 50 && inits() === pooled + 1; i++) {
      await oldCall(session, "tools/call", { name: "a__echo", arguments: { text: "4" } });
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(inits()).toBe(pooled + 2);
  });
});
