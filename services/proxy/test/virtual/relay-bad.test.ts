// @stores once: the MCP protocol through a virtual server.
import type { IncomingMessage, ServerResponse } from "node:http";
import { memberIdsOf } from "@gw/forward";
import { startUpstream, type TestApp, type Upstream } from "@gw/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Caller, caller, startGateway } from "../helpers.ts";
import { memberAgent, virtualAgent } from "./fixture.ts";

// Members that misuse server-initiated messages (docs/mcp.md, Server-initiated messages): one that
// never reads the client's answer, one that floods its client with requests, one that answers the
// relayed response with garbage; and gateway ids that are forged or another's. Bounded by time-outs
// and caps; no 5xx but the member's own failure; nothing crosses sessions, agents or tenants.

const SECRET = "relay-bad-test-session-secret-0123456789abcdef";
const ENV = { GW_MCP_SESSION_SECRET: SECRET, GW_TRANSACT_TIMEOUT_MS: "3000" };
const FAST = { rate_limit: { rps: 100_000, burst: 100_000 } };
const OLD = { "content-type": "application/json", accept: "application/json, text/event-stream" };
let gw: TestApp;
let call: Caller;
let bad: Upstream;
let v: string;
let other: string;
let session: string;
/** Tool calls waiting for their client's answer, by the member's request id. */
const waiting = new Map<string, ServerResponse>();

const result = (id: unknown, value: object) => JSON.stringify({ jsonrpc: "2.0", id, result: value });
const event = (data: string) => `event: message\ndata: ${data}\n\n`;
const ask = (id: string) =>
  event(JSON.stringify({ jsonrpc: "2.0", id, method: "elicitation/create", params: { message: id } }));

/** A raw older member (2025-06-18, session "s1"): its tools ask the client on the call's stream. */
function member(_req: IncomingMessage, res: ServerResponse, body: Buffer) {
  const msg = body.length > 0 ? JSON.parse(body.toString("utf8")) : {};
  const json = (status: number, text: string) =>
    res.writeHead(status, { "content-type": "application/json", "mcp-session-id": "s1" }).end(text);
  if (msg.method === "server/discover") return json(400, "{}");
  if (msg.method === "initialize")
    return json(
      200,
      result(msg.id, {
        protocolVersion: "2025-06-18",
        capabilities: { tools: {} },
        serverInfo: { name: "bad", version: "1" },
      }),
    );
  if (msg.method === "tools/list")
    return json(
      200,
      result(msg.id, {
        tools: ["silent", "flood", "garbage"].map((name) => ({ name, inputSchema: { type: "object" } })),
      }),
    );
  if (msg.method === undefined && typeof msg.id === "string") {
    // The client's answer to a request: the tool it asked for ends once it arrived.
    const pending = waiting.get(msg.id);
    waiting.delete(msg.id);
    pending?.end(event(result(Number(msg.id.split(":")[1]), { content: [{ type: "text", text: "done" }] })));
    if (msg.id.startsWith("silent")) return; // never answers the answer's POST
    if (msg.id.startsWith("garbage")) return res.writeHead(500, { "content-type": "text/plain" }).end("%%%");
    return json(202, "");
  }
  if (msg.method !== "tools/call") return json(202, "");
  const name = msg.params?.name as string;
  res.writeHead(200, { "content-type": "text/event-stream", "mcp-session-id": "s1" });
  if (name === "flood") {
    for (let i = 0; i < 200; i++) res.write(ask(`flood${i}`));
    return res.end(event(result(msg.id, { content: [{ type: "text", text: "flooded" }] })));
  }
  waiting.set(`${name}:${msg.id}`, res);
  res.write(ask(`${name}:${msg.id}`));
}

beforeAll(async () => {
  gw = await startGateway(ENV);
  call = await caller(gw);
  bad = await startUpstream(member);
  const m = await memberAgent(call, bad.url);
  v = await virtualAgent(call, [{ agent_id: m, prefix: "x" }], FAST);
  other = await virtualAgent(call, [{ agent_id: m, prefix: "y" }], FAST);
  session = await initialize(v);
});
afterAll(async () => {
  for (const res of waiting.values()) res.destroy();
  await bad?.close();
  await gw?.close();
});

async function initialize(agent: string, who = call): Promise<string> {
  const body = {
    jsonrpc: "2.0",
    id: 1,
    method: "initialize",
    params: {
      protocolVersion: "2025-06-18",
      capabilities: { elicitation: {} },
      clientInfo: { name: "raw", version: "1" },
    },
  };
  const res = await who("POST", `/v1/proxy/${agent}/stream`, body, OLD);
  return res.headers.get("mcp-session-id") as string;
}

const headersOf = (s: string) => ({
  ...OLD,
  authorization: `Bearer ${call.token}`,
  "mcp-session-id": s,
  "mcp-protocol-version": "2025-06-18",
});

/** A tools/call on the streaming path, its SSE answer read event by event. */
async function toolCall(name: string, id: number) {
  const res = await fetch(`${gw.url}/v1/proxy/${v}/stream`, {
    method: "POST",
    headers: headersOf(session),
    body: JSON.stringify({
      jsonrpc: "2.0",
      id,
      method: "tools/call",
      params: { name: `x__${name}`, arguments: {} },
    }),
  });
  expect(res.headers.get("content-type")).toMatch(/text\/event-stream/);
  const reader = (res.body as ReadableStream<Uint8Array>).getReader();
  let buffered = "";
  const decoder = new TextDecoder();
  return {
    /** The next event's JSON-RPC message; null once the stream ended. */
    next: async (): Promise<Record<string, unknown> | null> => {
      for (;;) {
        const end = buffered.indexOf("\n\n");
        if (end !== -1) {
          const block = buffered.slice(0, end);
          buffered = buffered.slice(end + 2);
          const data = block.split("\n").find((l) => l.startsWith("data: "));
          if (data) return JSON.parse(data.slice(6));
          continue;
        }
        const { done, value } = await reader.read();
        if (done) return null;
        buffered += decoder.decode(value, { stream: true });
      }
    },
  };
}

function answer(id: unknown, s = session, agent = v, who = call) {
  return who(
    "POST",
    `/v1/proxy/${agent}/stream`,
    { jsonrpc: "2.0", id, result: { action: "decline" } },
    {
      ...OLD,
      "mcp-session-id": s,
      "mcp-protocol-version": "2025-06-18",
    },
  );
}

describe("virtual MCP server: members that misuse server-initiated messages", () => {
  it("caps the requests a member relays in one answer", async () => {
    const stream = await toolCall("flood", 11);
    const seen: Array<Record<string, unknown>> = [];
    for (let m = await stream.next(); m !== null; m = await stream.next()) seen.push(m);
    const requests = seen.filter((m) => m.method === "elicitation/create");
    expect(requests.length).toBe(64);
    for (const r of requests) expect(String(r.id)).toMatch(/^gw1\./);
    expect(seen.at(-1)).toMatchObject({ id: 11, result: { content: [{ text: "flooded" }] } });
  });

  it("answers a client's answer the member never reads with the member's time-out, not a 500", async () => {
    const stream = await toolCall("silent", 12);
    const asked = await stream.next();
    expect(asked).toMatchObject({ method: "elicitation/create", id: expect.stringMatching(/^gw1\./) });
    const posted = await answer(asked?.id);
    expect(posted.status).toBe(504);
    expect(await stream.next()).toMatchObject({ id: 12, result: { content: [{ text: "done" }] } });
  });

  it("answers 502 with a JSON-RPC error when the member answers the relayed response with garbage", async () => {
    const stream = await toolCall("garbage", 13);
    const asked = await stream.next();
    const posted = await answer(asked?.id);
    expect(posted.status).toBe(502);
    expect(posted.json).toMatchObject({ jsonrpc: "2.0", error: { code: -32603 } });
    expect(JSON.stringify(posted.json)).not.toContain("%%%");
    expect(await stream.next()).toMatchObject({ id: 13, result: { content: [{ text: "done" }] } });
  });

  it("refuses forged and foreign gateway ids as an unknown session's message (404)", async () => {
    const ids = memberIdsOf({ GW_MCP_SESSION_SECRET: SECRET });
    const claims = { kind: "request" as const, member: "agt_x", memberSession: "s1", id: "r" };
    const stream = await toolCall("silent", 14);
    const real = String((await stream.next())?.id);
    const [, payload, sig] = real.split(".");
    const forged = [
      "gw1.e30.AAAA",
      `gw1.${payload}.${sig?.slice(0, -2)}AA`,
      7,
      null,
      `${real}x`,
      // Issued for another agent, and for another tenant, with the gateway's own key.
      ids.issue({ ...claims, tenantId: call.tenant, agentId: other }),
      ids.issue({ ...claims, tenantId: "ten_other", agentId: v }),
      // Signed with another key.
      memberIdsOf({ GW_MCP_SESSION_SECRET: "another-secret-0123456789abcdef-0123" }).issue({
        ...claims,
        tenantId: call.tenant,
        agentId: v,
      }),
    ];
    for (const id of forged) {
      const res = await answer(id);
      expect(res.status, String(id)).toBe(404);
      expect(res.json).toMatchObject({ jsonrpc: "2.0", error: { code: -32001 } });
    }
    // The real id on another agent's session, and from another tenant: unknown there too.
    expect((await answer(real, await initialize(other), other)).status).toBe(404);
    const stranger = await caller(gw);
    expect((await answer(real, session, v, stranger)).status).toBe(404);
    // Without a session id: the revision's 400.
    const bare = await call("POST", `/v1/proxy/${v}/stream`, { jsonrpc: "2.0", id: real, result: {} }, OLD);
    expect(bare.status).toBe(400);
    // The real one still completes the call.
    expect((await answer(real)).status).toBe(504);
    expect(await stream.next()).toMatchObject({ id: 14 });
  });
});
