// @stores both: each write's audit event is appended in the write's transaction.
import { randomBytes, randomUUID } from "node:crypto";
import { newId } from "@gw/core";
import { client, newTenant, serveApp, startToolsUpstream, type TestApp, token } from "@gw/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createControlPlaneApp } from "../src/app.ts";

// The audit log (docs/audit.md) over real sockets: every control-plane write appends one event in
// its transaction, the reads are scoped to the caller's tenant and to audit:read.

let app: TestApp;
beforeAll(async () => {
  app = await serveApp(createControlPlaneApp, { GW_LOG_LEVEL: "trace" });
});
afterAll(() => app?.close());

const AUDIT = ["audit:read"];

async function tenantClients(sub = "alice") {
  const tenant = newTenant();
  return {
    tenant,
    write: client(app.url, await token(tenant, sub, ["approvals:decide"])),
    read: client(app.url, await token(tenant, "auditor", AUDIT)),
  };
}

/** The tenant's events, oldest first. */
async function events(read: ReturnType<typeof client>) {
  const res = await read("GET", "/v1/audit?limit=100");
  expect(res.status).toBe(200);
  return [...res.json.data].reverse();
}

describe("audit: each write appends its event", () => {
  it("records agents, credentials, policy and settlement writes with actor, resource and changes", async () => {
    const { write, read } = await tenantClients("alice");
    const secret = `SECRET-${randomBytes(16).toString("hex")}`;
    const cred = await write("POST", "/v1/credentials", { name: "k", kind: "bearer", secret });
    expect(cred.status).toBe(201);
    const rotated = `SECRET-${randomBytes(16).toString("hex")}`;
    expect((await write("PUT", `/v1/credentials/${cred.json.id}`, { secret: rotated })).status).toBe(200);
    const agent = await write("POST", "/v1/agents", { name: "a", upstream_url: "http://127.0.0.1:9/x" });
    expect(agent.status).toBe(201);
    expect((await write("PATCH", `/v1/agents/${agent.json.id}`, { name: "b" })).status).toBe(200);
    expect((await write("PUT", "/v1/policy", { default: "allow", rules: [] })).status).toBe(200);
    expect((await write("DELETE", "/v1/policy")).status).toBe(204);
    expect(
      (await write("PUT", "/v1/settlement/config", { facilitator_url: "https://facilitator.example/x402" }))
        .status,
    ).toBe(200);
    expect((await write("DELETE", `/v1/agents/${agent.json.id}`)).status).toBe(204);
    expect((await write("DELETE", `/v1/credentials/${cred.json.id}`)).status).toBe(204);

    const list = await events(read);
    expect(list.map((e) => [e.action, e.resource_id, e.actor])).toEqual([
      ["credential.create", cred.json.id, "alice"],
      ["credential.rotate", cred.json.id, "alice"],
      ["agent.create", agent.json.id, "alice"],
      ["agent.update", agent.json.id, "alice"],
      ["policy.replace", "policy", "alice"],
      ["policy.delete", "policy", "alice"],
      ["settlement.replace", "settlement", "alice"],
      ["agent.delete", agent.json.id, "alice"],
      ["credential.delete", cred.json.id, "alice"],
    ]);
    const [cc, cr, , au] = list;
    expect(cc.changes.secret).toEqual({});
    expect(cc.changes.name).toEqual({ from: null, to: "k" });
    expect(cr.changes).toEqual({ secret: {}, version: { from: 1, to: 2 }, hint: {} });
    expect(au.changes).toEqual({ name: { from: "a", to: "b" } });
    expect(list[6].changes.facilitator_url).toEqual({ from: null, to: "https://facilitator.example/x402" });
    for (const e of list) {
      expect(e.id).toMatch(/^aud_/);
      expect(e.request_id).toBeTruthy();
      expect(e.digest).toMatch(/^sha256:[0-9a-f]{64}$/);
    }
    // Secrets are never in the log, the events or the export.
    const exported = await read("GET", "/v1/audit/export");
    for (const s of [secret, rotated]) {
      expect(JSON.stringify(list)).not.toContain(s);
      expect(exported.text).not.toContain(s);
      expect(app.logs.text()).not.toContain(s);
    }
    // Each event is also one `audit` log line.
    expect(app.logs.text()).toContain(`"audit":{"id":"${list[0].id}"`);
    expect(await read("GET", "/v1/audit/verify")).toMatchObject({
      status: 200,
      json: { events: 9, valid: true },
    });
  });

  it("records approval decisions, and a refused write records nothing", async () => {
    const { tenant, write, read } = await tenantClients("bob");
    const ids: string[] = [];
    for (let i = 0; i < 2; i++) {
      const id = newId("apr");
      ids.push(id);
      await app.rt.store.query(
        `insert into approvals (id, tenant_id, agent_id, sub, mcp_method, mcp_tool, call_digest, status, expires_at)
         values ($1, $2, $3, 'caller', 'tools/call', 'echo', $4, 'pending', now() + interval '1 hour')`,
        [id, tenant, newId("agt"), `sha256:${randomUUID()}`],
      );
    }
    expect((await write("POST", `/v1/approvals/${ids[0]}/approve`, { reason: "ok" })).status).toBe(200);
    expect((await write("POST", `/v1/approvals/${ids[1]}/deny`)).status).toBe(200);
    // Not pending any more: 409, and no event.
    expect((await write("POST", `/v1/approvals/${ids[0]}/deny`)).status).toBe(409);
    expect((await write("POST", "/v1/agents", { name: "" })).status).toBe(400);
    const list = await events(read);
    expect(list.map((e) => [e.action, e.resource_id, e.actor, e.changes.status])).toEqual([
      ["approval.approve", ids[0], "bob", { from: "pending", to: "approved" }],
      ["approval.deny", ids[1], "bob", { from: "pending", to: "denied" }],
    ]);
  });
});

describe("audit: tool pins and refreshes", () => {
  it("records a refresh with the tools' digests, then a pin and an unpin", async () => {
    const server = await startToolsUpstream({
      tools: [{ name: "search", description: "Searches", inputSchema: { type: "object" } }],
    });
    try {
      const { write, read } = await tenantClients("dana");
      const agent = await write("POST", "/v1/agents", {
        name: "mcp",
        upstream_url: server.url,
        protocol: "mcp",
        mcp_transport: "streamable_http",
      });
      expect(agent.status).toBe(201);
      const id = agent.json.id;
      const refreshed = await write("POST", `/v1/agents/${id}/tools/refresh`);
      expect(refreshed.status).toBe(200);
      expect((await write("POST", `/v1/agents/${id}/tools/pin`)).status).toBe(200);
      expect((await write("DELETE", `/v1/agents/${id}/tools/pin`)).status).toBe(200);
      const list = (await events(read)).slice(1);
      expect(list.map((e) => [e.action, e.resource_id, e.actor])).toEqual([
        ["tools.refresh", id, "dana"],
        ["tools.pin", id, "dana"],
        ["tools.unpin", id, "dana"],
      ]);
      const digest = refreshed.json.data[0].digest;
      expect(list[0].changes).toEqual({ tools: { from: {}, to: { search: digest } } });
      expect(list[1].changes).toEqual({ pinned: { from: null, to: ["search"] } });
      expect(list[2].changes).toEqual({ pinned: { from: ["search"], to: null } });
    } finally {
      await server.close();
    }
  });
});

describe("audit: the chain", () => {
  it("stays one linear chain under concurrent writes of one tenant", async () => {
    const { write, read } = await tenantClients();
    const made = await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        write("POST", "/v1/agents", { name: `a${i}`, upstream_url: "http://127.0.0.1:9/x" }),
      ),
    );
    expect(made.map((r) => r.status)).toEqual(Array(10).fill(201));
    const verify = await read("GET", "/v1/audit/verify");
    expect(verify.json).toEqual({ events: 10, valid: true });
    const list = await events(read);
    for (let i = 1; i < list.length; i++) expect(list[i].prev_digest).toBe(list[i - 1].digest);
  });

  it.skipIf(!process.env.DATABASE_URL)(
    "reports an event edited in the database (real Postgres; the embedded store is this process's own memory, edited the same way by the unit test of @gw/audit)",
    async () => {
      const { write, read } = await tenantClients();
      for (const name of ["x", "y", "z"]) {
        await write("POST", "/v1/agents", { name, upstream_url: "http://127.0.0.1:9/x" });
      }
      const list = await events(read);
      await app.rt.store.query(`update audit_events set changes = '{}'::jsonb where id = $1`, [list[1].id]);
      expect((await read("GET", "/v1/audit/verify")).json).toEqual({
        events: 3,
        valid: false,
        first_bad_id: list[1].id,
      });
    },
  );
});

describe("audit: reads", () => {
  it("filters, pages newest first, and exports NDJSON oldest first", async () => {
    const { write, read } = await tenantClients("carol");
    const a = await write("POST", "/v1/agents", { name: "a", upstream_url: "http://127.0.0.1:9/x" });
    await write("PATCH", `/v1/agents/${a.json.id}`, { name: "a2" });
    await write("PUT", "/v1/policy", { default: "allow", rules: [] });
    const byAction = await read("GET", "/v1/audit?action=agent.update");
    expect(byAction.json.data.map((e: { action: string }) => e.action)).toEqual(["agent.update"]);
    expect(byAction.json.total).toBe(1);
    const byResource = await read("GET", `/v1/audit?resource_id=${a.json.id}&limit=1`);
    expect(byResource.json).toMatchObject({ limit: 1, offset: 0, total: 2 });
    expect(byResource.json.data[0].action).toBe("agent.update");
    expect((await read("GET", "/v1/audit?actor=nobody")).json.total).toBe(0);
    expect((await read("GET", "/v1/audit?actor=carol")).json.total).toBe(3);
    const future = new Date(Date.now() + 3_600_000).toISOString();
    expect((await read("GET", `/v1/audit?since=${future}`)).json.total).toBe(0);

    const exported = await read("GET", "/v1/audit/export");
    expect(exported.status).toBe(200);
    expect(exported.headers.get("content-type")).toBe("application/x-ndjson");
    const lines = exported.text
      .trimEnd()
      .split("\n")
      .map((l) => JSON.parse(l));
    expect(lines.map((e) => e.action)).toEqual(["agent.create", "agent.update", "policy.replace"]);
    expect(exported.text.endsWith("\n")).toBe(true);
  });

  it("refuses bad filters with 400", async () => {
    const { read } = await tenantClients();
    for (const q of [
      "action=agent.explode",
      "since=yesterday",
      "until=2020-13-01",
      "since=2026-02-01T00:00:00Z&until=2026-01-01T00:00:00Z",
      "limit=x",
      "offset=-1",
      "actor=%00",
      `resource_id=${"r".repeat(300)}`,
      "colour=blue",
    ]) {
      const res = await read("GET", `/v1/audit?${q}`);
      expect(res.status, q).toBe(400);
      expect(typeof res.json.error, q).toBe("string");
    }
    expect((await read("GET", "/v1/audit/export?since=nope")).status).toBe(400);
    expect((await read("GET", "/v1/audit/verify?x=1")).status).toBe(400);
  });

  it("needs scope audit:read, and shows another tenant nothing", async () => {
    const { write } = await tenantClients();
    await write("POST", "/v1/agents", { name: "a", upstream_url: "http://127.0.0.1:9/x" });
    for (const path of ["/v1/audit", "/v1/audit/export", "/v1/audit/verify"]) {
      const res = await write("GET", path);
      expect(res.status, path).toBe(403);
      expect(res.json).toEqual({ error: "scope audit:read required" });
    }
    const other = await tenantClients();
    expect((await other.read("GET", "/v1/audit")).json).toMatchObject({ data: [], total: 0 });
    expect((await other.read("GET", "/v1/audit/export")).text).toBe("");
    expect((await other.read("GET", "/v1/audit/verify")).json).toEqual({ events: 0, valid: true });
  });
});
