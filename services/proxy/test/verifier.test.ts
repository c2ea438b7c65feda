// @stores both: the replay reservation is a unique insert in the store.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import {
  client,
  mcpInitialize,
  newTenant,
  type Res,
  startMcpUpstream,
  type TestApp,
  token,
  type Upstream,
} from "@gw/testkit";
import {
  envelope,
  flooder,
  hanger,
  installReferenceVerifier,
  printer,
  programDir,
  type ReferenceVerifier,
  readRecording,
  recorder,
  toolsCall,
  verdict,
  writeProgram,
} from "@gw/verifier/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Caller, caller, createAgent, pollDone, startGateway, upstreamPool } from "./helpers.ts";

// Verified-action mode end to end: the real gateway with GW_VERIFIER_BINARY set to the reference
// verifier (installed as an operator installs it), real Postgres and Redis, real local upstreams.

const MCP_HEADERS = { "content-type": "application/json", accept: "application/json, text/event-stream" };
const ENVELOPE = "gw.gateway.verifier-mcp-call.v1";
const BUNDLE = "gw.verifier.authorization-bundle.v1";

let ref: ReferenceVerifier;
let gw: TestApp;
let call: Caller;
const pool = upstreamPool();

beforeAll(async () => {
  ref = await installReferenceVerifier();
  gw = await startGateway({ GW_VERIFIER_BINARY: ref.binary });
  call = await caller(gw);
});
afterAll(async () => {
  await gw?.close();
  await pool.closeAll();
});

/** A JSON-RPC upstream that records every body and answers each request with a result. */
async function recordingUpstream(status = 200): Promise<Upstream> {
  return pool.up((_req, res, body) => {
    let id: unknown = null;
    try {
      id = (JSON.parse(body.toString("utf8")) as { id?: unknown }).id ?? null;
    } catch {}
    res.writeHead(status, { "content-type": "application/json" });
    res.end(JSON.stringify({ jsonrpc: "2.0", id, result: { content: [{ type: "text", text: "done" }] } }));
  });
}

const mcpAgent = (c: Caller, url: string) =>
  createAgent(c, { upstream_url: url, protocol: "mcp", mcp_transport: "streamable_http" });

/** The binding a bundle must carry for `c` calling `agentId`. */
function binding(c: Caller, agentId: string, tool = "echo", args: Record<string, unknown> = { text: "hi" }) {
  return {
    request: { tool, arguments: args },
    mission: {
      principal: "user-1",
      constraints: { "gateway.tenant_id": c.tenant, "gateway.agent_id": agentId },
    },
  };
}

const post = (c: Caller, agentId: string, body: string, headers: Record<string, string> = {}) =>
  c("POST", `/v1/proxy/${agentId}`, body, { ...MCP_HEADERS, ...headers });

async function invocationCount(c: Caller, agentId: string): Promise<number> {
  const res = await c("GET", `/v1/invocations?agent_id=${agentId}&limit=100`);
  expect(res.status).toBe(200);
  return res.json.total as number;
}

function expectError(res: Res, status: number, error?: string) {
  expect({ status: res.status, json: res.json }).toMatchObject({ status, json: error ? { error } : {} });
  expect(typeof res.json?.error).toBe("string");
}

describe("verified-action mode: the happy path", () => {
  it("reports verified_action_required in capabilities", async () => {
    const res = await call("GET", "/v1/capabilities");
    expect(res.json.verified_action_required).toBe(true);
    expect(res.json.limits.bundle_max_bytes).toBe(1024 * 1024);
  });

  it("forwards only the inner call of a signed envelope, exactly as written; a replay is 409", async () => {
    const upstream = await recordingUpstream();
    const agent = await mcpAgent(call, upstream.url);
    const inner =
      '{ "jsonrpc": "2.0", "id": "c-1", "method": "tools/call", "params": {"name": "echo", "arguments": {"text": "hi"}} }';
    const body = `{"schema":"${ENVELOPE}","call":${inner},"authorization":${JSON.stringify(ref.mint(binding(call, agent)))}}`;
    const accepted = await post(call, agent, body);
    expect(accepted.status).toBe(202);
    const done = await pollDone(call, agent, accepted.json.invocation_id);
    expect(done.json).toMatchObject({ status: "succeeded", mcp_method: "tools/call", mcp_tool: "echo" });
    expect(upstream.received).toHaveLength(1);
    expect(upstream.received[0]?.body.toString("utf8")).toBe(inner);

    expectError(await post(call, agent, body), 409, "authorization already used");
    expect(upstream.received).toHaveLength(1);
    expect(await invocationCount(call, agent)).toBe(1);
  });

  it("works with the official MCP SDK server: initialize and list plainly, call tools with envelopes", async () => {
    const upstream = await startMcpUpstream({ jsonResponse: true });
    try {
      const agent = await mcpAgent(call, upstream.url);
      const transact = async (body: string, headers: Record<string, string> = {}) => {
        const res = await post(call, agent, body, headers);
        expect(res.status).toBe(202);
        return pollDone(call, agent, res.json.invocation_id);
      };
      const init = await transact(JSON.stringify(mcpInitialize()));
      const session = {
        "mcp-session-id": init.json.response.headers["mcp-session-id"] as string,
        "mcp-protocol-version": "2025-06-18",
      };
      await transact(JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" }), session);
      const listed = await transact(JSON.stringify({ jsonrpc: "2.0", id: 2, method: "tools/list" }), session);
      expect(listed.json.status).toBe("succeeded");
      const sum = await transact(
        envelope(
          toolsCall("add", { a: 2, b: 40 }, 3),
          ref.mint(binding(call, agent, "add", { b: 40, a: 2.0 })),
        ),
        session,
      );
      const result = JSON.parse(Buffer.from(sum.json.response.body_b64, "base64").toString("utf8"));
      expect(result.result.content).toEqual([{ type: "text", text: "42" }]);
      expect(upstream.posts("tools/call").map((r) => r.tool)).toEqual(["add"]);
    } finally {
      await upstream.close();
    }
  });

  it.each([
    ["members reordered", '{"b":[1,{"y":2,"x":1}],"a":"é"}'],
    ["numbers respelt", '{"a":"é","b":[1.0,{"x":1e0,"y":20E-1}]}'],
    ["string escapes", '{"a":"\\u00e9","b":[1,{"x":1,"y":2}]}'],
    ["whitespace", '{ "a" : "é" ,\n\t"b" : [ 1 , { "x" : 1 , "y" : 2 } ] }'],
  ])("passes arguments canonically equal to the verified ones (%s)", async (_name, spelled) => {
    const upstream = await recordingUpstream();
    const agent = await mcpAgent(call, upstream.url);
    const inner = `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":${spelled}}}`;
    const bundle = ref.mint(binding(call, agent, "echo", { a: "é", b: [1, { x: 1, y: 2 }] }));
    const res = await post(
      call,
      agent,
      `{"schema":"${ENVELOPE}","call":${inner},"authorization":${JSON.stringify(bundle)}}`,
    );
    expect(res.status).toBe(202);
    await pollDone(call, agent, res.json.invocation_id);
    expect(upstream.received.map((r) => r.body.toString("utf8"))).toEqual([inner]);
  });

  it("of six concurrent replays exactly one passes", async () => {
    const upstream = await recordingUpstream();
    const agent = await mcpAgent(call, upstream.url);
    const body = envelope(toolsCall("echo", { text: "hi" }), ref.mint(binding(call, agent)));
    const answers = await Promise.all(Array.from({ length: 6 }, () => post(call, agent, body)));
    const statuses = answers.map((r) => r.status).sort();
    expect(statuses).toEqual([202, 409, 409, 409, 409, 409]);
    for (const r of answers.filter((a) => a.status === 409))
      expect(r.json).toEqual({ error: "authorization already used" });
    const accepted = answers.find((r) => r.status === 202);
    await pollDone(call, agent, accepted?.json.invocation_id);
    expect(upstream.received).toHaveLength(1);
    expect(await invocationCount(call, agent)).toBe(1);
  });

  it("keeps the authorization used after the upstream failed", async () => {
    const upstream = await recordingUpstream(500);
    const agent = await mcpAgent(call, upstream.url);
    const body = envelope(toolsCall("echo", { text: "hi" }), ref.mint(binding(call, agent)));
    const res = await post(call, agent, body);
    expect(res.status).toBe(202);
    expect((await pollDone(call, agent, res.json.invocation_id)).json.status).toBe("failed");
    expectError(await post(call, agent, body), 409, "authorization already used");
    expect(upstream.received).toHaveLength(1);
  });

  it("leaves other MCP methods and HTTP agents alone", async () => {
    const upstream = await recordingUpstream();
    const agent = await mcpAgent(call, upstream.url);
    const list = '{"jsonrpc":"2.0","id":1,"method":"tools/list"}';
    const res = await post(call, agent, list);
    expect(res.status).toBe(202);
    await pollDone(call, agent, res.json.invocation_id);
    const httpAgent = await createAgent(call, { upstream_url: upstream.url });
    const bare = JSON.stringify(toolsCall("echo", { text: "hi" }));
    const http = await post(call, httpAgent, bare);
    expect(http.status).toBe(202);
    await pollDone(call, httpAgent, http.json.invocation_id);
    const streamed = await call("POST", `/v1/proxy/${httpAgent}/stream`, bare, MCP_HEADERS);
    expect(streamed.status).toBe(200);
    expect(upstream.received.map((r) => r.body.toString("utf8"))).toEqual([list, bare, bare]);
  });
});

describe("verified-action mode: every refusal forwards nothing and creates nothing", () => {
  let upstream: Upstream;
  let agent: string;
  let otherAgent: string;
  beforeAll(async () => {
    upstream = await recordingUpstream();
    agent = await mcpAgent(call, upstream.url);
    otherAgent = await mcpAgent(call, upstream.url);
  });

  const good = () => ref.mint(binding(call, agent));
  const okCall = toolsCall("echo", { text: "hi" });
  const raw = (o: Record<string, string>) =>
    `{${Object.entries(o)
      .map(([k, v]) => `"${k}":${v}`)
      .join(",")}}`;
  const parts = () => ({
    schema: `"${ENVELOPE}"`,
    call: JSON.stringify(okCall),
    authorization: JSON.stringify(good()),
  });

  const cases: Array<[string, () => string, number, string | undefined]> = [
    [
      "a bare tools/call (missing envelope)",
      () => JSON.stringify(okCall),
      403,
      "verified authorization required",
    ],
    [
      "a wrong envelope schema id",
      () => raw({ ...parts(), schema: '"gw.gateway.verifier-mcp-call.v0"' }),
      400,
      undefined,
    ],
    [
      "a wrong bundle schema id",
      () => raw({ ...parts(), authorization: JSON.stringify({ ...good(), schema: `${BUNDLE}x` }) }),
      400,
      undefined,
    ],
    ["an extra envelope key", () => raw({ ...parts(), extra: "true" }), 400, undefined],
    ["a missing envelope key", () => raw({ schema: parts().schema, call: parts().call }), 400, undefined],
    [
      "a duplicate envelope key",
      () => `${raw(parts()).slice(0, -1)},"call":${parts().call}}`,
      400,
      undefined,
    ],
    [
      "a duplicate key nested in the call",
      () => raw({ ...parts(), call: parts().call.replace('"text":"hi"', '"text":"hi","text":"bye"') }),
      400,
      undefined,
    ],
    [
      "a duplicate key nested in the bundle",
      () =>
        raw({
          ...parts(),
          authorization: parts().authorization.replace('"text":"hi"', '"text":"bye","text":"hi"'),
        }),
      400,
      undefined,
    ],
    [
      "an oversize bundle",
      () => raw({ ...parts(), authorization: `{"schema":"${BUNDLE}","pad":"${"x".repeat(1024 * 1024)}"}` }),
      413,
      "the authorization bundle is larger than 1 MiB",
    ],
    [
      "a bad signature",
      () =>
        envelope(toolsCall("echo", { text: "bye" }), {
          ...good(),
          request: { tool: "echo", arguments: { text: "bye" } },
        }),
      403,
      "authorization not verified",
    ],
    [
      "a tool mismatch",
      () => envelope(toolsCall("delete", { text: "hi" }), good()),
      403,
      "call does not match the verified authorization",
    ],
    [
      "an argument mismatch",
      () => envelope(toolsCall("echo", { text: "bye" }), good()),
      403,
      "call does not match the verified authorization",
    ],
    [
      "a wrong tenant",
      () =>
        envelope(
          okCall,
          ref.mint({
            ...binding(call, agent),
            mission: {
              principal: "user-1",
              constraints: { "gateway.tenant_id": newTenant(), "gateway.agent_id": agent },
            },
          }),
        ),
      403,
      "call does not match the verified authorization",
    ],
    [
      "a wrong agent",
      () => envelope(okCall, ref.mint(binding(call, otherAgent))),
      403,
      "call does not match the verified authorization",
    ],
  ];

  it.each(cases)("%s", async (_name, body, status, error) => {
    expectError(await post(call, agent, body()), status, error);
    expect(upstream.received).toHaveLength(0);
    expect(await invocationCount(call, agent)).toBe(0);
  });

  it("a wrong principal (another subject of the same tenant)", async () => {
    const other = Object.assign(client(gw.url, await token(call.tenant, "user-2")), {
      tenant: call.tenant,
      token: "",
    });
    expectError(
      await post(other, agent, envelope(okCall, good())),
      403,
      "call does not match the verified authorization",
    );
    expect(upstream.received).toHaveLength(0);
    expect(await invocationCount(call, agent)).toBe(0);
  });

  it("an Mcp-Name header that disagrees with the inner call (after verification): -32020", async () => {
    const res = await post(call, agent, envelope(okCall, good()), { "mcp-name": "delete" });
    expect(res.status).toBe(400);
    expect(res.json).toEqual({
      jsonrpc: "2.0",
      id: okCall.id,
      error: { code: -32020, message: expect.stringContaining("Mcp-Name") },
    });
    expect(upstream.received).toHaveLength(0);
    expect(await invocationCount(call, agent)).toBe(0);
  });

  it("the streaming endpoint for an MCP agent: 409, before it is parsed, judged, paid or recorded", async () => {
    const res = await call("POST", `/v1/proxy/${agent}/stream`, envelope(okCall, good()), MCP_HEADERS);
    expectError(res, 409);
    const list = await call(
      "POST",
      `/v1/proxy/${agent}/stream`,
      '{"jsonrpc":"2.0","id":1,"method":"tools/list"}',
      MCP_HEADERS,
    );
    expectError(list, 409);
    expectError(
      await call("GET", `/v1/proxy/${agent}/stream`, undefined, { accept: "text/event-stream" }),
      409,
    );
    expect(upstream.received).toHaveLength(0);
    expect(await invocationCount(call, agent)).toBe(0);
  });
});

describe("verified-action mode: a verifier that misbehaves", () => {
  const dir = programDir();
  const programs: Array<[string, () => string]> = [
    ["crashes", () => writeProgram(dir, "crash", 'throw new Error("boom")')],
    ["exits non-zero after a valid verdict", () => printer(dir, "exit1", JSON.stringify(verdict()), 1)],
    ["hangs", () => hanger(dir, join(dir, "hang.pid"))],
    ["floods stdout", () => flooder(dir)],
    ["prints garbage", () => printer(dir, "garbage", "ok")],
  ];

  it.each(programs)("a verifier that %s: 403, nothing forwarded, nothing created", async (_name, make) => {
    const bad = await startGateway({ GW_VERIFIER_BINARY: make() });
    try {
      const c = await caller(bad);
      const upstream = await recordingUpstream();
      const agent = await mcpAgent(c, upstream.url);
      const body = envelope(toolsCall("echo", { text: "hi" }), ref.mint(binding(c, agent)));
      expectError(await post(c, agent, body), 403, "authorization not verified");
      expect(upstream.received).toHaveLength(0);
      expect(await invocationCount(c, agent)).toBe(0);
    } finally {
      await bad.close();
    }
  });

  it("the verifier sees argv `verify --format json -`, an empty environment and the exact authorization bytes", async () => {
    const record = join(dir, "seen.json");
    const gwRec = await startGateway({ GW_VERIFIER_BINARY: recorder(dir, record, verdict()) });
    try {
      const c = await caller(gwRec);
      const agent = await mcpAgent(c, (await recordingUpstream()).url);
      const authorization = `{ "schema" : "${BUNDLE}",\n  "opaque": ["é", 1.0, {"z": null}] }`;
      const body = `{"call":${JSON.stringify(toolsCall("echo", { text: "hi" }))},"authorization":${authorization},"schema":"${ENVELOPE}"}`;
      // The recorder's verdict binds another tenant: verified, then refused by the comparison.
      expectError(await post(c, agent, body), 403, "call does not match the verified authorization");
      const seen = readRecording(record);
      expect(seen.argv).toEqual(["verify", "--format", "json", "-"]);
      expect(seen.env).toEqual({});
      expect(seen.stdin.toString("utf8")).toBe(authorization);
      expect(readFileSync(record, "utf8")).not.toContain(c.token);
    } finally {
      await gwRec.close();
    }
  });
});
