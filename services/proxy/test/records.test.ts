// @stores both: streaming records are deferred writes to the store.
import {
  client,
  newTenant,
  startUpstream,
  TEST_DATABASE_URL,
  type TestApp,
  token,
  type Upstream,
} from "@gw/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startGateway } from "./helpers.ts";

// Streaming records are written off the critical path (ADR 0006): one INSERT of the final state
// for a call that ends quickly, a `running` row for one that outlives GW_STREAM_RECORD_DEFER_MS.
// What must hold: every call gets its record, and a graceful shutdown loses none.

let upstream: Upstream;
const releases: Array<() => void> = [];

beforeAll(async () => {
  upstream = await startUpstream((req, res) => {
    if (req.url?.startsWith("/slow")) {
      res.writeHead(200, { "content-type": "text/plain" });
      res.write("first ");
      releases.push(() => res.end("last"));
      return;
    }
    res.writeHead(200, { "content-type": "text/plain" }).end("ok");
  });
});
afterAll(async () => {
  for (const r of releases) r();
  await upstream?.close();
});

async function tenantOn(gw: TestApp) {
  const bearer = await token(newTenant());
  const call = client(gw.url, bearer);
  const agent = (await call("POST", "/v1/agents", { name: "a", upstream_url: upstream.url })).json
    .id as string;
  const slow = (await call("POST", "/v1/agents", { name: "s", upstream_url: `${upstream.url}/slow` })).json
    .id as string;
  return { call, agent, slow, bearer };
}

async function records(call: Awaited<ReturnType<typeof tenantOn>>["call"], agent: string) {
  const res = await call("GET", `/v1/invocations?agent_id=${agent}&limit=100`);
  return res.json.data as Array<Record<string, unknown>>;
}

describe("streaming records", () => {
  let gw: TestApp;
  beforeAll(async () => {
    gw = await startGateway({ GW_STREAM_RECORD_DEFER_MS: "300", GW_RATE_LIMIT_BURST: "1000" });
  });
  afterAll(async () => {
    await gw?.close();
  });

  it("N quick calls leave N complete records, each written once with its outcome", async () => {
    const { call, agent } = await tenantOn(gw);
    const n = 40;
    const answers = await Promise.all(
      Array.from({ length: n }, () =>
        call("POST", `/v1/proxy/${agent}/stream`, "x", { "content-type": "text/plain" }),
      ),
    );
    expect(answers.every((a) => a.status === 200)).toBe(true);
    const ids = new Set(answers.map((a) => a.headers.get("x-gateway-invocation-id")));
    expect(ids.size).toBe(n);
    let rows: Array<Record<string, unknown>> = [];
    for (let i = 0; i < 200 && rows.length < n; i++) {
      rows = await records(call, agent);
      if (rows.length < n) await new Promise((r) => setTimeout(r, 25));
    }
    expect(rows).toHaveLength(n);
    expect(new Set(rows.map((r) => r.id))).toEqual(ids);
    for (const r of rows) {
      expect(r).toMatchObject({ mode: "streaming", status: "succeeded", upstream_status: 200, resp_size: 2 });
      expect(typeof r.latency_ms).toBe("number");
      expect(r.completed_at).not.toBeNull();
    }
  });

  it("a call that outlives the threshold is visible as running, then completed", async () => {
    const { call, slow } = await tenantOn(gw);
    const pending = call("POST", `/v1/proxy/${slow}/stream`, "x", { "content-type": "text/plain" });
    let running: Array<Record<string, unknown>> = [];
    for (let i = 0; i < 200 && running.length === 0; i++) {
      running = (await records(call, slow)).filter((r) => r.status === "running");
      if (running.length === 0) await new Promise((r) => setTimeout(r, 25));
    }
    expect(running).toHaveLength(1);
    for (const r of releases.splice(0)) r();
    const res = await pending;
    expect(res.text).toBe("first last");
    let done: Array<Record<string, unknown>> = [];
    for (let i = 0; i < 200 && done.length === 0; i++) {
      done = (await records(call, slow)).filter((r) => r.status === "succeeded");
      if (done.length === 0) await new Promise((r) => setTimeout(r, 25));
    }
    expect(done).toHaveLength(1);
    expect(done[0]?.id).toBe(running[0]?.id);
    expect(done[0]?.resp_size).toBe(10);
  });
});

describe.skipIf(!TEST_DATABASE_URL)("graceful shutdown (shared Postgres)", () => {
  it("flushes every record of the calls it answered, even those still inside the threshold", async () => {
    // A long threshold: no record of these calls is written before the shutdown begins.
    const gw = await startGateway({ GW_STREAM_RECORD_DEFER_MS: "60000", GW_RATE_LIMIT_BURST: "1000" });
    const { call, agent, bearer } = await tenantOn(gw);
    // With a policy: each call's decision travels in its record's batch, flushed with it.
    expect((await call("PUT", "/v1/policy", { default: "warn" })).status).toBe(200);
    const n = 20;
    const answers = await Promise.all(
      Array.from({ length: n }, () =>
        call("POST", `/v1/proxy/${agent}/stream`, "x", { "content-type": "text/plain" }),
      ),
    );
    expect(answers.every((a) => a.status === 200)).toBe(true);
    await gw.close();
    // Another deployment on the same database reads what the first one left behind.
    const reader = await startGateway();
    try {
      const rows = await records(client(reader.url, bearer), agent);
      expect(rows).toHaveLength(n);
      for (const r of rows) {
        expect(r).toMatchObject({ status: "succeeded", upstream_status: 200, policy_action: "warn" });
      }
      const decided = await client(reader.url, bearer)("GET", "/v1/policy/decisions?limit=100");
      expect(decided.json.total).toBe(n);
    } finally {
      await reader.close();
    }
  });
});
