// @stores both: policy documents and the decision list's filters go through the store.
import { newId } from "@gw/core";
import { policyDecisions } from "@gw/db";
import { createDecisionRecorder, type PolicyInput } from "@gw/policy";
import { client, newTenant, serveApp, type TestApp, token } from "@gw/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createControlPlaneApp } from "../src/app.ts";

let app: TestApp;
beforeAll(async () => {
  app = await serveApp(createControlPlaneApp);
});
afterAll(() => app?.close());

const asTenant = async (tenant = newTenant()) => client(app.url, await token(tenant));

const DOC = {
  default: "warn",
  on_error: "allow",
  rules: [
    { action: "deny", match: { tools: ["delete_*"], protocols: ["mcp"] } },
    {
      classifier: { url: "https://classifier.example.com/decide", timeout_ms: 500 },
      match: { agents: ["agt_x"] },
    },
    { action: "allow" },
  ],
};

describe("policy document", () => {
  it("reads version 0 and no rules before any write", async () => {
    const call = await asTenant();
    const got = await call("GET", "/v1/policy");
    expect(got.status).toBe(200);
    expect(got.json).toEqual({ version: 0, rules: [] });
  });

  it("replaces the document, incrementing the version, and reads it back with defaults filled", async () => {
    const call = await asTenant();
    const put = await call("PUT", "/v1/policy", DOC);
    expect(put.status).toBe(200);
    expect(put.json).toEqual({ version: 1, updated_at: expect.any(String) });
    expect(new Date(put.json.updated_at).toISOString()).toBe(put.json.updated_at);
    const got = await call("GET", "/v1/policy");
    expect(got.json).toEqual({
      version: 1,
      default: "warn",
      on_error: "allow",
      rules: [
        { action: "deny", match: { tools: ["delete_*"], protocols: ["mcp"] } },
        {
          classifier: { url: "https://classifier.example.com/decide", timeout_ms: 500 },
          match: { agents: ["agt_x"] },
        },
        { action: "allow", match: {} },
      ],
      updated_at: put.json.updated_at,
    });
    const second = await call("PUT", "/v1/policy", { rules: [] });
    expect(second.json.version).toBe(2);
    expect((await call("GET", "/v1/policy")).json).toMatchObject({
      version: 2,
      default: "allow",
      on_error: "deny",
      rules: [],
    });
  });

  it.each([
    [{ rules: [{ action: "nope" }] }, /rules\.0\.action/],
    [{ rules: [{ action: "deny", match: { tools: ["a*b"] } }] }, /trailing \*/],
    [{ rules: [{ match: {} }] }, /exactly one of action or classifier/],
    [{ rules: [], surprise: 1 }, /unknown field/],
    [{ rules: [{ classifier: { url: "http://localhost/x" } }] }, /rules\.0\.classifier\.url/],
    [{ rules: [{ classifier: { url: "https://10.0.0.1/x" } }] }, /rules\.0\.classifier\.url/],
    [{ rules: [{ classifier: { url: "not a url" } }] }, /rules\.0\.classifier\.url/],
    [{ rules: [{ classifier: { url: "https://c.example.com", timeout_ms: 20_000 } }] }, /timeout_ms/],
    [[], /object/],
  ])("malformed %j → 400 naming the problem, stored document unchanged", async (body, message) => {
    const call = await asTenant();
    await call("PUT", "/v1/policy", DOC);
    const res = await call("PUT", "/v1/policy", body);
    expect(res.status).toBe(400);
    expect(res.json.error).toMatch(message);
    expect(Object.keys(res.json)).toEqual(["error"]);
    const got = await call("GET", "/v1/policy");
    expect(got.json.version).toBe(1);
    expect(got.json.default).toBe("warn");
  });

  it("refuses bodies that are not JSON, the wrong content type, and huge bodies without a 5xx", async () => {
    const call = await asTenant();
    expect((await call("PUT", "/v1/policy", "{", { "content-type": "application/json" })).status).toBe(400);
    expect((await call("PUT", "/v1/policy", "{}", { "content-type": "text/plain" })).status).toBe(400);
    const huge = JSON.stringify({ rules: [], pad: "x".repeat(2 * 1024 * 1024) });
    const refused = await call("PUT", "/v1/policy", huge, { "content-type": "application/json" });
    expect(refused.status).toBe(413);
    expect(refused.json).toEqual({ error: "request body is larger than 256 KiB" });
    expect((await call("GET", "/v1/policy")).json.version).toBe(0);
  });
});

describe("policy decisions list", () => {
  const tenant = newTenant();
  const t0 = Date.parse("2030-01-01T00:00:00.000Z");
  const minute = (i: number) => new Date(t0 + i * 60_000);
  const ids: string[] = [];

  beforeAll(async () => {
    // 25 decisions, one a minute, cycling allow/warn/deny, agents a (even) and b (odd).
    const rows = Array.from({ length: 25 }, (_, i) => {
      const id = newId("pdec");
      ids.push(id);
      return {
        id,
        tenantId: tenant,
        agentId: i % 2 === 0 ? "agt_a" : "agt_b",
        protocol: "mcp",
        mcpTool: `tool_${i}`,
        action: (["allow", "warn", "deny"] as const)[i % 3] as "allow" | "warn" | "deny",
        matchedRule: i % 3 === 0 ? "" : "1",
        reason: i % 3 === 0 ? "default" : "rule 1",
        createdAt: minute(i),
      };
    });
    await app.rt.store.db.insert(policyDecisions).values(rows);
  });

  it("pages newest first with limit 20 by default, the applied offset and the total", async () => {
    const call = await asTenant(tenant);
    const res = await call("GET", "/v1/policy/decisions");
    expect(res.status).toBe(200);
    expect(res.json).toMatchObject({ limit: 20, offset: 0, total: 25 });
    expect(res.json.data).toHaveLength(20);
    expect(res.json.data.map((d: { id: string }) => d.id)).toEqual(ids.slice(5).reverse());
    expect(res.json.data[0]).toEqual({
      id: ids[24],
      agent_id: "agt_a",
      protocol: "mcp",
      mcp_tool: "tool_24",
      action: "allow",
      matched_rule: "",
      reason: "default",
      receipt_artifact_id: null,
      created_at: minute(24).toISOString(),
    });
    const rest = await call("GET", "/v1/policy/decisions?offset=20");
    expect(rest.json).toMatchObject({ limit: 20, offset: 20, total: 25 });
    expect(rest.json.data.map((d: { id: string }) => d.id)).toEqual(ids.slice(0, 5).reverse());
  });

  it.each([
    ["0", 1],
    ["-5", 1],
    ["1", 1],
    ["100", 25],
    ["1000", 25],
  ])("limit=%s is clamped to 1..100", async (limit, rows) => {
    const call = await asTenant(tenant);
    const res = await call("GET", `/v1/policy/decisions?limit=${limit}`);
    expect(res.status).toBe(200);
    expect(res.json.limit).toBe(Math.min(Math.max(Number(limit), 1), 100));
    expect(res.json.data).toHaveLength(rows);
    expect(res.json.total).toBe(25);
  });

  it("filters by action (deny included), agent_id, and inclusive since/until; total counts the filter", async () => {
    const call = await asTenant(tenant);
    const deny = await call("GET", "/v1/policy/decisions?action=deny");
    expect(deny.json.total).toBe(8);
    expect(deny.json.data.every((d: { action: string }) => d.action === "deny")).toBe(true);
    const warnB = await call("GET", "/v1/policy/decisions?action=warn&agent_id=agt_b");
    // warn: i % 3 == 1 → 1,4,7,...,22 (8 rows); agent b: odd i → 1,7,13,19
    expect(warnB.json.data.map((d: { mcp_tool: string }) => d.mcp_tool)).toEqual([
      "tool_19",
      "tool_13",
      "tool_7",
      "tool_1",
    ]);
    const window = await call(
      "GET",
      `/v1/policy/decisions?since=${minute(3).toISOString()}&until=${minute(6).toISOString()}`,
    );
    expect(window.json.total).toBe(4);
    expect(window.json.data.map((d: { id: string }) => d.id)).toEqual(ids.slice(3, 7).reverse());
    const offsetZone = await call(
      "GET",
      `/v1/policy/decisions?since=${encodeURIComponent("2030-01-01T01:03:00+01:00")}`,
    );
    expect(offsetZone.json.total).toBe(22);
    const same = await call(
      "GET",
      `/v1/policy/decisions?since=${minute(5).toISOString()}&until=${minute(5).toISOString()}`,
    );
    expect(same.json.data.map((d: { id: string }) => d.id)).toEqual([ids[5]]);
    const unknownAgent = await call("GET", "/v1/policy/decisions?agent_id=agt_nobody");
    expect(unknownAgent.json).toMatchObject({ total: 0, data: [] });
  });

  it.each([
    "action=block",
    "action=ALLOW",
    "limit=ten",
    "limit=1.5",
    "offset=-1",
    "offset=x",
    "since=yesterday",
    "until=2030-13-01T00:00:00Z",
    "since=2030-01-01",
    "since=2030-01-02T00:00:00Z&until=2030-01-01T00:00:00Z",
  ])("%s → 400 with an error body", async (query) => {
    const call = await asTenant(tenant);
    const res = await call("GET", `/v1/policy/decisions?${query}`);
    expect(res.status).toBe(400);
    expect(res.json).toEqual({ error: expect.any(String) });
  });

  it("records decisions through the hot-path recorder (group commit) readable here", async () => {
    const t = newTenant();
    const recorder = createDecisionRecorder(app.rt.store.query);
    const input: PolicyInput = {
      tenantId: t,
      agentId: "agt_r",
      protocol: "http" as const,
      rpcMethod: null,
      mcpTool: null,
      model: null,
      bodySize: 1,
      principal: { sub: "u", scopes: [], claims: {} },
      agentName: "a",
      mode: "streaming",
      arguments: undefined,
    };
    const made = await Promise.all(
      Array.from({ length: 30 }, (_, i) =>
        recorder.record(input, { action: i % 2 ? "deny" : "allow", matchedRule: "", reason: "default" }),
      ),
    );
    expect(new Set(made).size).toBe(30);
    const call = await asTenant(t);
    const res = await call("GET", "/v1/policy/decisions?limit=100");
    expect(res.json.total).toBe(30);
    expect((await call("GET", "/v1/policy/decisions?action=deny")).json.total).toBe(15);
  });
});

describe("policy: tenant isolation and authentication", () => {
  it("another tenant sees none of the document or the decisions, and cannot change them", async () => {
    const a = newTenant();
    const callA = await asTenant(a);
    const callB = await asTenant();
    await callA("PUT", "/v1/policy", DOC);
    await createDecisionRecorder(app.rt.store.query).record(
      {
        tenantId: a,
        agentId: "agt_a",
        protocol: "http",
        rpcMethod: null,
        mcpTool: null,
        model: null,
        bodySize: 0,
        principal: { sub: "u", scopes: [], claims: {} },
        agentName: "a",
        mode: "streaming",
        arguments: undefined,
      },
      { action: "deny", matchedRule: "1", reason: "rule 1" },
    );
    expect((await callB("GET", "/v1/policy")).json).toEqual({ version: 0, rules: [] });
    expect((await callB("GET", "/v1/policy/decisions")).json).toMatchObject({ total: 0, data: [] });
    expect((await callB("GET", "/v1/policy/decisions?agent_id=agt_a")).json.total).toBe(0);
    expect((await callB("PUT", "/v1/policy", { default: "deny" })).json.version).toBe(1);
    expect((await callA("GET", "/v1/policy")).json).toMatchObject({ version: 1, default: "warn" });
    expect((await callA("GET", "/v1/policy/decisions")).json.total).toBe(1);
  });

  it.each([
    ["GET", "/v1/policy"],
    ["PUT", "/v1/policy"],
    ["GET", "/v1/policy/decisions"],
  ])("%s %s without a valid token → 401, empty body", async (method, path) => {
    const anon = client(app.url);
    const res = await anon(method, path, method === "PUT" ? { rules: [] } : undefined);
    expect(res.status).toBe(401);
    expect(res.text).toBe("");
    const bad = client(app.url, "not-a-token");
    expect((await bad(method, path)).status).toBe(401);
  });
});

describe("invocations: policy filter", () => {
  it("accepts allow and warn, refuses deny and anything else with 400", async () => {
    const call = await asTenant();
    expect((await call("GET", "/v1/invocations?policy=allow")).status).toBe(200);
    expect((await call("GET", "/v1/invocations?policy=warn")).status).toBe(200);
    for (const bad of ["deny", "ALLOW", "none"]) {
      const res = await call("GET", `/v1/invocations?policy=${bad}`);
      expect(res.status).toBe(400);
      expect(res.json.error).toMatch(/policy/);
    }
  });
});

describe("capabilities", () => {
  it("reports the policy and receipts families mounted", async () => {
    const call = await asTenant();
    const caps = (await call("GET", "/v1/capabilities")).json;
    expect(caps.surfaces).toMatchObject({ policy: true, receipts: true });
    expect(caps.posture).toMatchObject({ receipts_enabled: false, receipt_actor: "" });
  });
});
