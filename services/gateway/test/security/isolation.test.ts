// @stores both: tenant scoping is in every statement the store runs.
import { NEVER_IDS, type TestApp } from "@gw/testkit";
import { type Recorded, recordingCaller, sweepSecrets, Tally } from "@gw/testkit/sweep";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Caller, createAgent, pollDone, recordDone, startGateway, upstreamPool } from "../helpers.ts";

// Cross-tenant sweep: tenant B holds a valid token and every id tenant A has (agent, credential,
// transactional and streaming invocation) and tries every route with each. Every answer must be
// the one a never-existing id gets, and A's resources must be untouched afterwards.

const seen: Recorded[] = [];
const tally = new Tally();
const pool = upstreamPool();
let app: TestApp;
let a: Caller;
let b: Caller;
const secret = `sk-isolation-${crypto.randomUUID()}`;
const ids = { agent: "", otherAgent: "", cred: "", inv: "", streamInv: "", bAgent: "" };
let upstreamHits = 0;

beforeAll(async () => {
  app = await startGateway();
  a = await recordingCaller(app, seen, { scopes: ["invocations:read_body"] });
  // Same user id, another tenant: the tenant, not the user, is the boundary.
  b = await recordingCaller(app, seen, { scopes: ["invocations:read_body"] });
  const up = await pool.up((_req, res) => {
    upstreamHits++;
    res.setHeader("content-type", "application/json");
    res.end('{"ok":true}');
  });
  const cred = await a("POST", "/v1/credentials", { name: "a-cred", kind: "bearer", secret });
  ids.cred = cred.json.id;
  ids.agent = await createAgent(a, { upstream_url: `${up.url}/`, credential_ref: ids.cred });
  ids.otherAgent = await createAgent(a, { upstream_url: `${up.url}/` });
  const accepted = await a("POST", `/v1/proxy/${ids.agent}`, { q: 1 });
  ids.inv = accepted.json.invocation_id;
  await pollDone(a, ids.agent, ids.inv);
  const streamed = await a("POST", `/v1/proxy/${ids.agent}/stream`, { q: 2 });
  ids.streamInv = streamed.headers.get("x-gateway-invocation-id") as string;
  await recordDone(a, ids.streamInv);
  ids.bAgent = await createAgent(b, { upstream_url: `${up.url}/` });
});
afterAll(async () => {
  tally.print("Cross-tenant sweep (404 expected; lists empty; references 400)");
  if (app) await sweepSecrets(app, seen, [secret]);
  await pool.closeAll();
  await app?.close();
});

/** A valid agent event for `agentId` (docs/agent-events.md). */
function agentEvent(agentId: string) {
  return {
    schema: "gw.agent-event.v1",
    event_id: `evt-${agentId}`,
    agent_id: agentId,
    type: "session.started",
    session_ref: `sha256:${"a".repeat(64)}`,
    occurred_at: new Date().toISOString(),
    source: "security-suite",
    source_version: "1",
  };
}

const NEVER = { agent: NEVER_IDS.agt, cred: NEVER_IDS.cred, inv: NEVER_IDS.inv };

describe("tenant B with tenant A's ids", () => {
  /**
   * [method, path with A's ids, the same path with never-existing ids, body]. Every documented
   * route with an id in its path gets the plain case in every-route.test.ts; these are the cases
   * it cannot build: valid write bodies, a streaming invocation's id, B's own agent with A's
   * invocation, ids in a query or a body.
   */
  const routes = (): Array<[string, string, string, unknown]> => [
    ["PATCH", `/v1/agents/${ids.agent}`, `/v1/agents/${NEVER.agent}`, { name: "stolen" }],
    ["PUT", `/v1/credentials/${ids.cred}`, `/v1/credentials/${NEVER.cred}`, { secret: "overwritten-secret" }],
    ["GET", `/v1/invocations/${ids.streamInv}`, `/v1/invocations/${NEVER.inv}`, undefined],
    ["POST", `/v1/proxy/${ids.agent}`, `/v1/proxy/${NEVER.agent}`, { q: "b" }],
    ["POST", `/v1/proxy/${ids.agent}/stream`, `/v1/proxy/${NEVER.agent}/stream`, { q: "b" }],
    [
      "GET",
      `/v1/proxy/${ids.agent}/invocations/${ids.streamInv}`,
      `/v1/proxy/${NEVER.agent}/invocations/${NEVER.inv}`,
      undefined,
    ],
    // B's own agent, A's invocation.
    [
      "GET",
      `/v1/proxy/${ids.bAgent}/invocations/${ids.inv}`,
      `/v1/proxy/${ids.bAgent}/invocations/${NEVER.inv}`,
      undefined,
    ],
    [
      "GET",
      `/v1/agent-events/summary?agent_id=${ids.agent}`,
      `/v1/agent-events/summary?agent_id=${NEVER.agent}`,
      undefined,
    ],
    ["POST", "/v1/agent-events", "/v1/agent-events", undefined],
  ];

  it("gets exactly the answer of a never-existing id on every route", async () => {
    const hitsBefore = upstreamHits;
    for (const [method, path, never, body] of routes()) {
      const events = path === "/v1/agent-events";
      const res = await b(method, path, events ? agentEvent(ids.agent) : body);
      const ref = await b(method, never, events ? agentEvent(NEVER.agent) : body);
      tally.add(
        `${method} ${path.replace(/[a-z]+_[0-9a-f-]{36}/g, (m) => `{${m.split("_")[0]}}`)}`,
        res.status === 404,
      );
      expect(res.status, `${method} ${path}`).toBe(404);
      expect(res.text, `${method} ${path}`).toBe(ref.text);
    }
    expect(upstreamHits).toBe(hitsBefore);
  });

  it("sees none of A's rows in its lists, and cannot reference A's credential", async () => {
    for (const path of [
      "/v1/agents",
      "/v1/credentials",
      "/v1/invocations",
      `/v1/invocations?agent_id=${ids.agent}`,
      "/v1/policy/decisions",
      `/v1/policy/decisions?agent_id=${ids.agent}`,
      "/v1/approvals",
      `/v1/approvals?agent_id=${ids.agent}`,
      `/v1/analytics?agent_id=${ids.agent}`,
      "/v1/analytics",
    ]) {
      const res = await b("GET", path);
      const leaked = JSON.stringify(res.json).match(
        new RegExp(`${ids.agent}|${ids.cred}|${ids.inv}|${ids.streamInv}`),
      );
      // Filtered by A's agent: exactly what a never-existing agent id gets (empty, or 404).
      const filtered = path.includes(ids.agent);
      const ref = filtered ? await b("GET", path.replace(ids.agent, NEVER.agent)) : undefined;
      const same = ref === undefined || (res.status === ref.status && res.json.error === ref.json.error);
      tally.add("lists (refused = nothing of A)", (res.status === 200 || filtered) && !leaked && same);
      if (!filtered) expect(res.status).toBe(200);
      expect(same, path).toBe(true);
      expect(leaked).toBeNull();
    }
    const post = await b("POST", "/v1/agents", { name: "x", credential_ref: ids.cred });
    const patch = await b("PATCH", `/v1/agents/${ids.bAgent}`, { credential_ref: ids.cred });
    for (const res of [post, patch]) {
      tally.add("credential_ref to A's credential", res.status === 400);
      expect(res.status).toBe(400);
    }
  });

  it("A's invocations cannot be polled through another of A's agents either", async () => {
    const res = await a("GET", `/v1/proxy/${ids.otherAgent}/invocations/${ids.inv}`);
    tally.add("poll through another agent of the tenant", res.status === 404);
    expect(res.status).toBe(404);
  });

  it("left A's resources as they were", async () => {
    const agent = await a("GET", `/v1/agents/${ids.agent}`);
    expect(agent.json).toMatchObject({ name: "agent", status: "active", credential_ref: ids.cred });
    const cred = await a("GET", `/v1/credentials/${ids.cred}`);
    expect(cred.json).toMatchObject({ name: "a-cred", version: 1 });
    const inv = await a("GET", `/v1/invocations/${ids.inv}`);
    expect(inv.status).toBe(200);
  });
});
