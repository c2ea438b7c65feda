// @stores once: the MCP protocol through a virtual server, on two replicas of one store.
import { createProxyApp } from "@gw/proxy";
import { type AskingServer, serveApp, startAskingServer, type TestApp } from "@gw/testkit";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import {
  CreateMessageRequestSchema,
  ElicitRequestSchema,
  ListRootsRequestSchema,
  ResourceUpdatedNotificationSchema,
} from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Caller, caller, startGateway } from "../helpers.ts";
import { memberAgent, memberPool, transact, virtualAgent } from "./fixture.ts";

// Server-initiated messages through a virtual server (docs/mcp.md): an official SDK 1.x member asks
// the official SDK 1.x client during a tool call (elicitation, sampling, roots); the client's
// handlers answer through the gateway, also when the answer lands on another proxy replica.

const ENV = { GW_MCP_SESSION_SECRET: "relay-test-session-secret-0123456789abcdef" };
const FAST = { rate_limit: { rps: 100_000, burst: 100_000 } };
let gw: TestApp;
let replica: TestApp;
let call: Caller;
let asker: AskingServer;
const pool = memberPool();
let v: string;

beforeAll(async () => {
  gw = await startGateway(ENV);
  replica = await serveApp(
    (rt) => {
      const p = createProxyApp(rt);
      return { ...p, stop: () => p.inflight.drain() };
    },
    ENV,
    "proxy",
  );
  call = await caller(gw);
  asker = await startAskingServer();
  pool.add(asker);
  const m = await memberAgent(call, asker.url);
  v = await virtualAgent(call, [{ agent_id: m, prefix: "q" }], FAST);
});
afterAll(async () => {
  await pool.closeAll();
  await replica?.close();
  await gw?.close();
});

type Caps = {
  elicitation?: Record<string, never>;
  sampling?: Record<string, never>;
  roots?: Record<string, never>;
};

/** The SDK 1.x client with handlers for what `caps` declares; `answersTo` receives its responses. */
async function connect(caps: Caps, answersTo?: string) {
  const client = new Client({ name: "sdk1", version: "1.0.0" }, { capabilities: caps });
  if (caps.elicitation)
    client.setRequestHandler(ElicitRequestSchema, async (r) => ({
      action: "accept",
      content: { name: `ann:${r.params.message}` },
    }));
  if (caps.sampling)
    client.setRequestHandler(CreateMessageRequestSchema, async () => ({
      role: "assistant",
      model: "m1",
      content: { type: "text", text: "sampled" },
    }));
  if (caps.roots)
    client.setRequestHandler(ListRootsRequestSchema, async () => ({ roots: [{ uri: "file:///r1" }] }));
  const fetchVia = answersTo ? viaReplica(answersTo) : fetch;
  const transport = new StreamableHTTPClientTransport(new URL(`${gw.url}/v1/proxy/${v}/stream`), {
    requestInit: { headers: { Authorization: `Bearer ${call.token}` } },
    fetch: fetchVia,
  });
  await client.connect(transport);
  pool.add(client);
  return client;
}

/** A fetch that sends the client's JSON-RPC responses (bodies without a method) to `base` instead. */
function viaReplica(base: string): typeof fetch {
  return async (input, init) => {
    const body = typeof init?.body === "string" ? JSON.parse(init.body) : null;
    if (body && body.method === undefined && "id" in body) {
      const url = new URL(String(input instanceof Request ? input.url : input));
      const moved = new URL(url.pathname + url.search, base);
      seenOnReplica.push(body.id);
      return fetch(moved, init);
    }
    return fetch(input, init);
  };
}
const seenOnReplica: unknown[] = [];
const text = (r: object) => (r as { content: Array<{ text: string }> }).content[0]?.text;

describe("virtual MCP server: server-initiated messages of older members", () => {
  it("relays elicitation, sampling and roots/list to the client's handlers during a call", async () => {
    const client = await connect({ elicitation: {}, sampling: {}, roots: {} });
    const asked = await client.callTool({ name: "q__ask", arguments: { q: "who" } });
    expect(text(asked)).toBe('accept:{"name":"ann:who"}');
    expect(text(await client.callTool({ name: "q__sample", arguments: { q: "hi" } }))).toBe("m1:sampled");
    expect(text(await client.callTool({ name: "q__roots", arguments: {} }))).toBe("file:///r1");
    // The member saw the client's answers with its own ids, never the gateway's.
    const ids = asker.responses.map((r) => (r as { id: unknown }).id);
    expect(ids.length).toBeGreaterThanOrEqual(3);
    for (const id of ids) expect(String(id)).not.toMatch(/^gw1\./);
  });

  it("opens member sessions per set of client capabilities, declared in the member's initialize", async () => {
    const client = await connect({ sampling: {} });
    expect(text(await client.callTool({ name: "q__sample", arguments: { q: "x" } }))).toBe("m1:sampled");
    // A client that cannot answer elicitation is on a member session that never declared it; the
    // SDK member asks anyway, the client (no handler) answers an error, and the tool fails.
    const refused = await client.callTool({ name: "q__ask", arguments: { q: "no" } });
    expect(refused.isError).toBe(true);
    expect(asker.initializes).toContainEqual({ sampling: {} });
    expect(asker.initializes).toContainEqual({ elicitation: {}, roots: {}, sampling: {} });
  });

  it("completes the call when the client's answer lands on another replica", async () => {
    const before = seenOnReplica.length;
    const client = await connect({ elicitation: {}, sampling: {}, roots: {} }, replica.url);
    expect(text(await client.callTool({ name: "q__ask", arguments: { q: "far" } }))).toBe(
      'accept:{"name":"ann:far"}',
    );
    expect(seenOnReplica.length).toBe(before + 1);
    expect(String(seenOnReplica.at(-1))).toMatch(/^gw1\./);
  });

  it("merges the members' GET streams: a subscription's update reaches the client", async () => {
    // Capabilities of its own: a member session whose GET stream no other client of this file holds.
    const client = await connect({ roots: {} });
    expect(client.getServerCapabilities()?.resources).toMatchObject({ subscribe: true });
    const updated: string[] = [];
    client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => {
      updated.push(n.params.uri);
    });
    expect(await client.subscribeResource({ uri: "watched://r" })).toEqual({});
    // The GET stream opens once initialized was sent; the update is sent until it arrived.
    await expect
      .poll(async () => {
        await client.callTool({ name: "q__touch", arguments: {} });
        return updated;
      })
      .toContain("watched://r");
    expect(await client.unsubscribeResource({ uri: "watched://r" })).toEqual({});
  });

  it("answers 404 to a GET with a forged session id and 405 to one with none", async () => {
    const headers = { accept: "text/event-stream", "mcp-protocol-version": "2025-11-25" };
    const forged = await call("GET", `/v1/proxy/${v}/stream`, undefined, {
      ...headers,
      "mcp-session-id": "v1.x.y",
    });
    expect(forged.status).toBe(404);
    expect(forged.json).toMatchObject({ jsonrpc: "2.0", error: { code: -32001 } });
    expect((await call("GET", `/v1/proxy/${v}/stream`, undefined, headers)).status).toBe(405);
  });

  it("ends a session on DELETE: the ended id is refused on this replica and then on the other", async () => {
    const client = await connect({ roots: {} });
    const transport = client.transport as StreamableHTTPClientTransport;
    const session = transport.sessionId ?? "";
    expect(session).not.toBe("");
    const headers = {
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      "mcp-protocol-version": "2025-11-25",
      "mcp-session-id": session,
      authorization: `Bearer ${call.token}`,
    };
    const list = (base: string) =>
      fetch(`${base}/v1/proxy/${v}/stream`, {
        method: "POST",
        headers,
        body: JSON.stringify({ jsonrpc: "2.0", id: 7, method: "tools/list" }),
      });
    expect((await list(replica.url)).status).toBe(200);
    const ended = await fetch(`${gw.url}/v1/proxy/${v}/stream`, { method: "DELETE", headers });
    expect(ended.status).toBe(204);
    const here = await list(gw.url);
    expect(here.status).toBe(404);
    expect(await here.json()).toMatchObject({ jsonrpc: "2.0", error: { code: -32001 } });
    // The other replica hears of it through the change notifications.
    await expect.poll(async () => (await list(replica.url)).status).toBe(404);
    // A second DELETE of the ended id is an unknown session's.
    expect((await fetch(`${gw.url}/v1/proxy/${v}/stream`, { method: "DELETE", headers })).status).toBe(404);
  });

  it("relays on the member session opened anew after the member lost the old one", async () => {
    const client = await connect({ elicitation: {}, sampling: {}, roots: {} });
    expect(text(await client.callTool({ name: "q__ask", arguments: { q: "one" } }))).toBe(
      'accept:{"name":"ann:one"}',
    );
    await asker.expireSessions();
    expect(text(await client.callTool({ name: "q__ask", arguments: { q: "two" } }))).toBe(
      'accept:{"name":"ann:two"}',
    );
  });

  it("asks nothing on the transactional path: its member session declares no capabilities", async () => {
    const init = await call(
      "POST",
      `/v1/proxy/${v}/stream`,
      {
        jsonrpc: "2.0",
        id: 1,
        method: "initialize",
        params: {
          protocolVersion: "2025-11-25",
          capabilities: { elicitation: {} },
          clientInfo: { name: "raw", version: "1" },
        },
      },
      { "content-type": "application/json", accept: "application/json, text/event-stream" },
    );
    const session = init.headers.get("mcp-session-id") as string;
    const t = await transact(call, v, {
      body: {
        jsonrpc: "2.0",
        id: 2,
        method: "tools/call",
        params: { name: "q__ask", arguments: { q: "t" } },
      },
      headers: {
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
        "mcp-session-id": session,
        "mcp-protocol-version": "2025-11-25",
      },
    });
    // The member asks anyway (its SDK does not check): the gateway answers it an error at once, no hang.
    expect(t.body.result.isError).toBe(true);
  });
});
