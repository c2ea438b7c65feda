// @stores both: the summary is SQL over recorded events.
import { createHash, randomUUID } from "node:crypto";
import { client, newTenant, serveApp, type TestApp, token } from "@gw/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createControlPlaneApp } from "../src/app.ts";

let app: TestApp;
beforeAll(async () => {
  app = await serveApp(createControlPlaneApp);
});
afterAll(() => app?.close());

type Call = ReturnType<typeof client>;

async function tenantWithAgent(): Promise<{ call: Call; agent: string }> {
  const call = client(app.url, await token(newTenant()));
  const created = await call("POST", "/v1/agents", { name: "coder" });
  return { call, agent: created.json.id as string };
}

const ref = (s: string) => `sha256:${createHash("sha256").update(s).digest("hex")}`;

async function post(call: Call, agent: string, fields: Record<string, unknown>) {
  const res = await call("POST", "/v1/agent-events", {
    schema: "gw.agent-event.v1",
    event_id: randomUUID(),
    agent_id: agent,
    session_ref: ref("s1"),
    source: "hook",
    source_version: "1",
    ...fields,
  });
  expect(res.status, JSON.stringify(res.json)).toBe(201);
}

const SINCE = "2024-05-01T00:00:00Z";
const UNTIL = "2024-05-02T00:00:00Z";
const summaryPath = (agent: string, since = SINCE, until = UNTIL) =>
  `/v1/agent-events/summary?agent_id=${agent}&since=${encodeURIComponent(since)}&until=${encodeURIComponent(until)}`;

describe("GET /v1/agent-events/summary", () => {
  it("matches a fixture computed by hand", async () => {
    const { call, agent } = await tenantWithAgent();
    const sibling = (await call("POST", "/v1/agents", { name: "other" })).json.id as string;
    const at = (hhmm: string) => `2024-05-01T${hhmm}:00Z`;
    // In the window [SINCE, UNTIL], both bounds inclusive:
    await post(call, agent, { type: "session.started", session_ref: ref("s1"), occurred_at: SINCE });
    await post(call, agent, { type: "session.started", session_ref: ref("s1"), occurred_at: at("00:01") }); // same session again
    await post(call, agent, { type: "session.started", session_ref: ref("s2"), occurred_at: at("01:00") });
    await post(call, agent, { type: "session.ended", session_ref: ref("s3"), occurred_at: at("02:00") }); // ended only: no session
    await post(call, agent, {
      type: "tool.completed",
      outcome: "succeeded",
      duration_ms: 100,
      occurred_at: at("03:00"),
    });
    await post(call, agent, {
      type: "tool.completed",
      outcome: "succeeded",
      duration_ms: 40,
      occurred_at: at("03:01"),
    });
    await post(call, agent, {
      type: "tool.completed",
      outcome: "failed",
      duration_ms: 7,
      occurred_at: at("03:02"),
    });
    await post(call, agent, { type: "tool.completed", outcome: "cancelled", occurred_at: at("03:03") }); // no duration
    await post(call, agent, { type: "tool.completed", duration_ms: 3, occurred_at: at("03:04") }); // no outcome
    await post(call, agent, {
      type: "model.usage",
      input_tokens: 1000,
      output_tokens: 200,
      cost_usd: 0.1,
      occurred_at: at("04:00"),
    });
    await post(call, agent, {
      type: "model.usage",
      input_tokens: 500,
      output_tokens: 50,
      cost_usd: 0.2,
      occurred_at: at("05:00"),
    });
    await post(call, agent, { type: "model.usage", input_tokens: 1, occurred_at: UNTIL }); // no cost: cost unknown
    // Outside the window, or another agent's: never counted.
    await post(call, agent, {
      type: "session.started",
      session_ref: ref("s9"),
      occurred_at: "2024-04-30T23:59:59.999Z",
    });
    await post(call, agent, {
      type: "model.usage",
      input_tokens: 7,
      cost_usd: 9,
      occurred_at: "2024-05-02T00:00:00.001Z",
    });
    await post(call, sibling, {
      type: "tool.completed",
      outcome: "succeeded",
      duration_ms: 5,
      occurred_at: at("06:00"),
    });

    const res = await call("GET", summaryPath(agent));
    expect(res.status).toBe(200);
    expect(res.json).toEqual({
      schema: "gw.agent-event-summary.v1",
      agent_id: agent,
      since: "2024-05-01T00:00:00.000Z",
      until: "2024-05-02T00:00:00.000Z",
      summary: {
        sessions: 2, // s1, s2
        tool_calls: 5,
        tools_succeeded: 2,
        tools_failed: 2, // failed + cancelled
        tool_duration_ms: 150, // 100 + 40 + 7 + 3
        input_tokens: 1501, // 1000 + 500 + 1
        output_tokens: 250,
        cost_usd: 0.3, // exact decimal sum, not 0.30000000000000004
        cost_known: false,
        last_event_at: "2024-05-02T00:00:00.000Z",
      },
    });

    // A window holding only the priced usage: cost is known.
    const priced = await call("GET", summaryPath(agent, at("04:00"), at("05:00")));
    expect(priced.json.summary).toEqual({
      sessions: 0,
      tool_calls: 0,
      tools_succeeded: 0,
      tools_failed: 0,
      tool_duration_ms: 0,
      input_tokens: 1500,
      output_tokens: 250,
      cost_usd: 0.3,
      cost_known: true,
      last_event_at: "2024-05-01T05:00:00.000Z",
    });
  });

  it("an empty window: zeros, cost known, no last_event_at", async () => {
    const { call, agent } = await tenantWithAgent();
    const res = await call("GET", summaryPath(agent));
    expect(res.status).toBe(200);
    expect(res.json.summary).toEqual({
      sessions: 0,
      tool_calls: 0,
      tools_succeeded: 0,
      tools_failed: 0,
      tool_duration_ms: 0,
      input_tokens: 0,
      output_tokens: 0,
      cost_usd: 0,
      cost_known: true,
    });
  });

  it("defaults to the last 24 hours", async () => {
    const { call, agent } = await tenantWithAgent();
    const recent = new Date(Date.now() - 60_000).toISOString();
    await post(call, agent, { type: "session.started", occurred_at: recent });
    await post(call, agent, {
      type: "session.started",
      session_ref: ref("old"),
      occurred_at: new Date(Date.now() - 25 * 3_600_000).toISOString(),
    });
    const res = await call("GET", `/v1/agent-events/summary?agent_id=${agent}`);
    expect(res.status).toBe(200);
    expect(res.json.summary.sessions).toBe(1);
    expect(new Date(res.json.until).getTime() - new Date(res.json.since).getTime()).toBe(24 * 3_600_000);
  });

  it("reads a deleted agent's history", async () => {
    const { call, agent } = await tenantWithAgent();
    await post(call, agent, { type: "session.started", occurred_at: "2024-05-01T12:00:00Z" });
    expect((await call("DELETE", `/v1/agents/${agent}`)).status).toBe(204);
    const res = await call("GET", summaryPath(agent));
    expect(res.status).toBe(200);
    expect(res.json.summary.sessions).toBe(1);
  });

  it.each([
    ["no agent_id", "/v1/agent-events/summary", /agent_id/],
    ["a window over 31 days", "AGENT&since=2024-01-01T00:00:00Z&until=2024-02-01T00:00:00.001Z", /31 days/],
    ["since after until", "AGENT&since=2024-05-02T00:00:00Z&until=2024-05-01T00:00:00Z", /since/],
    ["a malformed since", "AGENT&since=yesterday", /since/],
    ["year zero", "AGENT&since=0000-01-01T00:00:00Z&until=0000-01-02T00:00:00Z", /since/],
    ["a rolled-over until", "AGENT&until=2024-02-30T00:00:00Z", /until/],
  ])("%s → 400", async (_name, query, message) => {
    const { call, agent } = await tenantWithAgent();
    const path = query.startsWith("/")
      ? query
      : `/v1/agent-events/summary?agent_id=${query.replace("AGENT", agent)}`;
    const res = await call("GET", path);
    expect(res.status).toBe(400);
    expect(res.json.error).toMatch(message);
  });

  it("exactly 31 days is accepted", async () => {
    const { call, agent } = await tenantWithAgent();
    const res = await call("GET", summaryPath(agent, "2024-01-01T00:00:00Z", "2024-02-01T00:00:00Z"));
    expect(res.status).toBe(200);
  });

  it("another tenant's, an unknown or a malformed agent → 404; 401 without a token", async () => {
    const a = await tenantWithAgent();
    const b = await tenantWithAgent();
    await post(a.call, a.agent, { type: "session.started", occurred_at: "2024-05-01T12:00:00Z" });
    for (const agent of [a.agent, "agt_x", `agt_${randomUUID()}`]) {
      const res = await b.call("GET", summaryPath(agent));
      expect(res.status, agent).toBe(404);
      expect(res.json).toEqual({ error: "agent not found" });
    }
    const anon = await client(app.url)("GET", summaryPath(a.agent));
    expect(anon.status).toBe(401);
    expect(anon.text).toBe("");
  });
});
