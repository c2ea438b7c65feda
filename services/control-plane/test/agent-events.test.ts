// @stores both: idempotent recording is a unique insert in the store.
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

async function tenantWithAgent(): Promise<{ tenant: string; call: Call; agent: string }> {
  const tenant = newTenant();
  const call = client(app.url, await token(tenant));
  const created = await call("POST", "/v1/agents", { name: "coder" });
  expect(created.status).toBe(201);
  return { tenant, call, agent: created.json.id as string };
}

const ref = (s: string) => `sha256:${createHash("sha256").update(s).digest("hex")}`;

function event(agentId: string, over: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    schema: "gw.agent-event.v1",
    event_id: `ev-${randomUUID()}`,
    agent_id: agentId,
    type: "tool.completed",
    session_ref: ref("session-1"),
    occurred_at: "2024-05-01T10:00:00Z",
    tool_name: "read_file",
    outcome: "succeeded",
    duration_ms: 12,
    source: "claude-code-hook",
    source_version: "1.2.3",
    ...over,
  };
}

/** Rows recorded for an event id in a tenant, read from the table itself. */
async function rowsOf(tenant: string, eventId: string): Promise<number> {
  const rows = await app.rt.store.query(
    "select count(*)::int as n from agent_events where tenant_id = $1 and event_id = $2",
    [tenant, eventId],
  );
  return Number(rows[0]?.n);
}

describe("POST /v1/agent-events: recording", () => {
  it("records an event once: 201 first, 200 duplicate, one row", async () => {
    const { tenant, call, agent } = await tenantWithAgent();
    const ev = event(agent, {
      type: "model.usage",
      provider: "anthropic",
      model: "claude-x",
      input_tokens: 10,
      output_tokens: 2,
      cache_read_tokens: 3,
      cache_write_tokens: 4,
      cost_usd: 0.0001,
    });
    const first = await call("POST", "/v1/agent-events", ev);
    expect(first.status).toBe(201);
    expect(first.json).toEqual({ recorded: true, duplicate: false });
    const again = await call("POST", "/v1/agent-events", { ...ev, duration_ms: 999 });
    expect(again.status).toBe(200);
    expect(again.json).toEqual({ recorded: true, duplicate: true });
    expect(await rowsOf(tenant, ev.event_id as string)).toBe(1);
    // The first record stands: the duplicate's different content was not written.
    const [row] = await app.rt.store.query(
      "select duration_ms::int as d, cost_usd::text as c, occurred_at from agent_events where tenant_id = $1",
      [tenant],
    );
    expect(row?.d).toBe(12);
    expect(row?.c).toBe("0.0001");
  });

  it("twenty concurrent posts of one event: one 201, nineteen 200, one row", async () => {
    const { tenant, agent } = await tenantWithAgent();
    const ev = event(agent);
    const bearer = await token(tenant);
    const results = await Promise.all(
      Array.from({ length: 20 }, () => client(app.url, bearer)("POST", "/v1/agent-events", ev)),
    );
    const statuses = results.map((r) => r.status).sort();
    expect(statuses.filter((s) => s === 201)).toHaveLength(1);
    expect(statuses.filter((s) => s === 200)).toHaveLength(19);
    expect(results.filter((r) => r.json.duplicate === true)).toHaveLength(19);
    expect(await rowsOf(tenant, ev.event_id as string)).toBe(1);
  });

  it("keeps event ids per tenant: the same id records in two tenants", async () => {
    const a = await tenantWithAgent();
    const b = await tenantWithAgent();
    const id = `shared-${randomUUID()}`;
    expect((await a.call("POST", "/v1/agent-events", event(a.agent, { event_id: id }))).status).toBe(201);
    expect((await b.call("POST", "/v1/agent-events", event(b.agent, { event_id: id }))).status).toBe(201);
  });

  it("accepts only the required fields", async () => {
    const { call, agent } = await tenantWithAgent();
    const minimal = {
      schema: "gw.agent-event.v1",
      event_id: randomUUID(),
      agent_id: agent,
      type: "session.started",
      session_ref: ref("s"),
      occurred_at: "2024-05-01T10:00:00.123+02:00",
      source: "cli",
      source_version: "0.1",
    };
    expect((await call("POST", "/v1/agent-events", minimal)).status).toBe(201);
  });
});

describe("POST /v1/agent-events: refusals record nothing", () => {
  const required = [
    "schema",
    "event_id",
    "agent_id",
    "type",
    "session_ref",
    "occurred_at",
    "source",
    "source_version",
  ];
  it.each(required)("missing %s → 400 naming it; the refused event_id records later", async (field) => {
    const { tenant, call, agent } = await tenantWithAgent();
    const ev = event(agent);
    const { [field]: _gone, ...partial } = ev;
    const res = await call("POST", "/v1/agent-events", partial);
    expect(res.status).toBe(400);
    expect(res.json.error).toContain(field);
    expect(res.json.error).toMatch(/required/);
    expect(await rowsOf(tenant, ev.event_id as string)).toBe(0);
    expect((await call("POST", "/v1/agent-events", ev)).status).toBe(201);
  });

  const NUL = "a\u0000b";
  const bad: Array<[string, unknown]> = [
    ["schema", "gw.agent-event.v2"],
    ["schema", 1],
    ["event_id", ""],
    ["event_id", "x".repeat(257)],
    ["event_id", NUL],
    ["event_id", 42],
    ["agent_id", 42],
    ["type", "session.paused"],
    ["type", null],
    ["session_ref", "session-1"],
    ["session_ref", `sha256:${"A".repeat(64)}`],
    ["session_ref", `sha256:${"a".repeat(63)}`],
    ["occurred_at", "yesterday"],
    ["occurred_at", "0000-01-01T00:00:00Z"],
    ["occurred_at", "2024-02-30T00:00:00Z"],
    ["occurred_at", "2024-05-01T24:00:00Z"],
    ["occurred_at", "2024-05-01"],
    ["occurred_at", "+010000-01-01T00:00:00Z"],
    ["occurred_at", 1714557600000],
    ["tool_name", ""],
    ["tool_name", NUL],
    ["tool_name", "t".repeat(257)],
    ["outcome", "ok"],
    ["duration_ms", -1],
    ["duration_ms", 1.5],
    ["duration_ms", "12"],
    ["duration_ms", 2 ** 53],
    ["provider", NUL],
    ["model", 7],
    ["input_tokens", -5],
    ["output_tokens", 0.5],
    ["cache_read_tokens", "3"],
    ["cache_write_tokens", null],
    ["cost_usd", -0.01],
    ["cost_usd", "0.1"],
    ["cost_usd", 1e13],
    ["source", ""],
    ["source", NUL],
    ["source_version", "v".repeat(65)],
  ];
  it.each(bad)("%s = %j → 400 naming the field, nothing recorded", async (field, value) => {
    const { tenant, call, agent } = await tenantWithAgent();
    const ev = event(agent, { [field]: value });
    const res = await call("POST", "/v1/agent-events", ev);
    expect(res.status).toBe(400);
    expect(res.json.error).toContain(field);
    // (An id Postgres cannot hold cannot be looked up either: count the tenant's rows instead.)
    const [all] = await app.rt.store.query(
      "select count(*)::int as n from agent_events where tenant_id = $1",
      [tenant],
    );
    expect(all?.n).toBe(0);
  });

  it("an infinite cost (1e400 in JSON) is refused", async () => {
    const { call, agent } = await tenantWithAgent();
    const text = JSON.stringify(event(agent, { cost_usd: 1 })).replace('"cost_usd":1', '"cost_usd":1e400');
    const res = await call("POST", "/v1/agent-events", text, { "content-type": "application/json" });
    expect(res.status).toBe(400);
    expect(res.json.error).toContain("cost_usd");
  });

  it.each(["prompt", "arguments", "output", "command", "path", "cwd", "Schema", "__proto__", "constructor"])(
    "unknown field %s → 400 naming it, nothing recorded; the event records without it",
    async (field) => {
      const { tenant, call, agent } = await tenantWithAgent();
      const ev = event(agent);
      const res = await call("POST", "/v1/agent-events", { ...ev, [field]: "rm -rf /secret" });
      expect(res.status).toBe(400);
      expect(res.json.error).toBe(`unknown field "${field}"`);
      expect(res.text).not.toContain("rm -rf");
      expect(await rowsOf(tenant, ev.event_id as string)).toBe(0);
      expect((await call("POST", "/v1/agent-events", ev)).status).toBe(201);
    },
  );

  it("refuses bodies that are not one JSON event object", async () => {
    const { call, agent } = await tenantWithAgent();
    const json = { "content-type": "application/json" };
    for (const body of ["", "{", "null", "[]", '"event"', "42"]) {
      const res = await call("POST", "/v1/agent-events", body, json);
      expect(res.status, body).toBe(400);
      expect(typeof res.json.error).toBe("string");
    }
    const plain = await call("POST", "/v1/agent-events", JSON.stringify(event(agent)), {
      "content-type": "text/plain",
    });
    expect(plain.status).toBe(400);
  });

  it("a body over 32 KiB → 413, at the limit it is judged on its content", async () => {
    const { tenant, call, agent } = await tenantWithAgent();
    const ev = event(agent);
    const base = JSON.stringify(ev).length;
    const over = JSON.stringify({ ...ev, pad: "x".repeat(32 * 1024 - base) });
    expect(Buffer.byteLength(over)).toBeGreaterThan(32 * 1024);
    const res = await call("POST", "/v1/agent-events", over, { "content-type": "application/json" });
    expect(res.status).toBe(413);
    expect(res.json).toEqual({ error: "request body is larger than 32 KiB" });
    const atLimit = JSON.stringify({ ...ev, pad: "x".repeat(32 * 1024 - base - 10) });
    expect(Buffer.byteLength(atLimit)).toBeLessThanOrEqual(32 * 1024);
    const judged = await call("POST", "/v1/agent-events", atLimit, { "content-type": "application/json" });
    expect(judged.status).toBe(400);
    expect(judged.json.error).toBe('unknown field "pad"');
    expect(await rowsOf(tenant, ev.event_id as string)).toBe(0);
  });
});

describe("POST /v1/agent-events: agents and tenants", () => {
  it("an unknown, malformed, deleted or other tenant's agent → 404, nothing recorded", async () => {
    const { tenant, call, agent } = await tenantWithAgent();
    const other = await tenantWithAgent();
    const deleted = (await call("POST", "/v1/agents", { name: "gone" })).json.id as string;
    expect((await call("DELETE", `/v1/agents/${deleted}`)).status).toBe(204);
    const unknown = `agt_${"0".repeat(8)}-0000-7000-8000-${"0".repeat(12)}`;
    for (const agentId of [unknown, "agt_nope", "", other.agent, deleted]) {
      const ev = event(agentId);
      const res = await call("POST", "/v1/agent-events", ev);
      expect(res.status, agentId).toBe(404);
      expect(res.json).toEqual({ error: "agent not found" });
      expect(await rowsOf(tenant, ev.event_id as string)).toBe(0);
    }
    expect((await call("POST", "/v1/agent-events", event(agent))).status).toBe(201);
  });

  it("401 with no body without a valid token", async () => {
    const { agent } = await tenantWithAgent();
    for (const bearer of [undefined, "not-a-jwt"]) {
      const res = await client(app.url, bearer)("POST", "/v1/agent-events", event(agent));
      expect(res.status).toBe(401);
      expect(res.text).toBe("");
    }
  });
});
