// @stores both: analytics are SQL aggregates over invocations.
import { randomUUID } from "node:crypto";
import { newId } from "@gw/core";
import { client, newTenant, serveApp, type TestApp, token } from "@gw/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createControlPlaneApp } from "../src/app.ts";

let app: TestApp;
beforeAll(async () => {
  app = await serveApp(createControlPlaneApp);
});
afterAll(() => app?.close());

type Call = ReturnType<typeof client>;
type Inv = {
  agent_id: string;
  status: "pending" | "running" | "succeeded" | "failed";
  created_at: string;
  latency_ms: number | null;
  req_size: number | null;
  resp_size: number | null;
  settlement_status: string | null;
  settled_amount: string | null;
};

async function tenant(): Promise<{ tenant: string; call: Call; agent: () => Promise<string> }> {
  const t = newTenant();
  const call = client(app.url, await token(t));
  return {
    tenant: t,
    call,
    agent: async () => (await call("POST", "/v1/agents", { name: "a" })).json.id as string,
  };
}

/**
 * Writes invocation rows straight into the table, so the test controls created_at and latency.
 * The open rows are shaped so that no reconciler ends them while the test reads: other files'
 * workers share this database, and they end (rightly) a transactional `pending` row that has no
 * stored request, and a streaming `running` row whose process is gone. A `pending` row here is a
 * streaming one and a `running` row a transactional one that never started; analytics ignore mode.
 */
async function insert(tenantId: string, rows: Inv[]) {
  const records = rows.map((r) => ({
    ...r,
    id: newId("inv"),
    settlement: r.settlement_status
      ? { status: r.settlement_status, ...(r.settled_amount ? { settled_amount: r.settled_amount } : {}) }
      : null,
  }));
  await app.rt.store.query(
    `insert into invocations (id, tenant_id, agent_id, mode, status, latency_ms, req_size, resp_size,
       settlement, settlement_status, created_at)
     select x.id, $1, x.agent_id,
       case when x.status = 'pending' then 'streaming' else 'transactional' end, x.status, x.latency_ms, x.req_size, x.resp_size,
       x.settlement, x.settlement_status, x.created_at
     from jsonb_to_recordset($2::jsonb) as x(id text, agent_id text, status text, latency_ms bigint,
       req_size bigint, resp_size bigint, settlement jsonb, settlement_status text, created_at timestamptz)`,
    [tenantId, JSON.stringify(records)],
  );
}

/** Continuous percentile (linear interpolation between closest ranks), as Postgres defines it. */
function percentileCont(values: number[], p: number): number | null {
  if (values.length === 0) return null;
  const s = [...values].sort((a, b) => a - b);
  const pos = p * (s.length - 1);
  const lo = Math.floor(pos);
  const hi = Math.ceil(pos);
  const a = s[lo] as number;
  const b = s[hi] as number;
  return a + (pos - lo) * (b - a);
}

/** A latency as the API shows it: rounded to 0.001 ms (docs/agent-events.md, Analytics). */
const ms3 = (x: number | null) => (x === null ? null : Math.round(x * 1000) / 1000);

/** The expected analytics, computed here from the rows inserted. */
function expected(rows: Inv[], bucket: "hour" | "day") {
  const unit = bucket === "hour" ? 3_600_000 : 86_400_000;
  const groups = new Map<string, Inv[]>();
  for (const r of rows) {
    const start = new Date(Math.floor(new Date(r.created_at).getTime() / unit) * unit).toISOString();
    const key = `${start}|${r.agent_id}`;
    groups.set(key, [...(groups.get(key) ?? []), r]);
  }
  return [...groups.keys()].sort().map((key) => {
    const g = groups.get(key) as Inv[];
    const [bucket_start, agent_id] = key.split("|");
    const lat = g.flatMap((r) => (r.latency_ms === null ? [] : [r.latency_ms]));
    const settled = g
      .filter((r) => r.settlement_status === "settled" || r.settlement_status === "settled_upstream_failed")
      .reduce((n, r) => n + BigInt(r.settled_amount ?? "0"), 0n);
    return {
      agent_id,
      bucket_start,
      invocations: g.length,
      succeeded: g.filter((r) => r.status === "succeeded").length,
      failed: g.filter((r) => r.status === "failed").length,
      latency_ms_p50: ms3(percentileCont(lat, 0.5)),
      latency_ms_p95: ms3(percentileCont(lat, 0.95)),
      latency_ms_p99: ms3(percentileCont(lat, 0.99)),
      req_bytes: g.reduce((n, r) => n + (r.req_size ?? 0), 0),
      resp_bytes: g.reduce((n, r) => n + (r.resp_size ?? 0), 0),
      settled_amount: settled.toString(),
    };
  });
}

/** Deterministic pseudo-random numbers, so a failure reproduces. */
function lcg(seed: number) {
  let x = seed;
  return () => {
    x = (x * 1_103_515_245 + 12_345) % 2 ** 31;
    return x / 2 ** 31;
  };
}

const BIG = "123456789012345678901234567890123456789"; // beyond 64 bits: the sum must stay exact

function fixture(agents: string[], day: string, n: number, seed: number): Inv[] {
  const rnd = lcg(seed);
  const statuses = ["succeeded", "succeeded", "succeeded", "failed", "pending", "running"] as const;
  const settlements = [null, null, "settled", "settled_upstream_failed", "settlement_failed", "pending"];
  return Array.from({ length: n }, (_, i) => {
    const status = statuses[Math.floor(rnd() * statuses.length)] ?? "succeeded";
    const terminal = status === "succeeded" || status === "failed";
    const settlement_status = settlements[Math.floor(rnd() * settlements.length)] ?? null;
    return {
      agent_id: agents[i % agents.length] as string,
      status,
      // Three hours of the day, at any millisecond (the last one of an hour included).
      created_at: new Date(
        new Date(`${day}T00:00:00Z`).getTime() +
          Math.floor(rnd() * 3) * 3_600_000 +
          Math.floor(rnd() * 3_600_000),
      ).toISOString(),
      latency_ms: terminal ? Math.floor(rnd() ** 3 * 5000) : null,
      req_size: terminal ? Math.floor(rnd() * 10_000) : null,
      resp_size: terminal ? Math.floor(rnd() * 100_000) : null,
      settlement_status,
      settled_amount: settlement_status === null ? null : i % 7 === 0 ? BIG : String(Math.floor(rnd() * 1e6)),
    };
  });
}

/** At most three decimals, as JSON writes the number: no float noise such as 674.9999999999995. */
const THREE_DECIMALS = /^\d+(\.\d{1,3})?$/;

function expectRows(actual: Array<Record<string, unknown>>, want: Array<Record<string, unknown>>) {
  expect(actual.length).toBe(want.length);
  actual.forEach((row, i) => {
    const w = want[i] as Record<string, unknown>;
    for (const [k, v] of Object.entries(w)) {
      // The true percentiles of integer latencies have at most two decimals: rounded, they are exact.
      expect(row[k], `${i}.${k}`).toEqual(v);
      if (k.startsWith("latency_ms_") && row[k] !== null)
        expect(String(row[k]), `${i}.${k}`).toMatch(THREE_DECIMALS);
    }
    expect(Object.keys(row).sort()).toEqual(Object.keys(w).sort());
  });
}

const q = (since: string, until: string, extra = "") =>
  `/v1/analytics?since=${encodeURIComponent(since)}&until=${encodeURIComponent(until)}${extra}`;

describe("GET /v1/analytics", () => {
  it("per agent per UTC hour and day: counts, percentiles computed independently, bytes, exact settled sums", async () => {
    const t = await tenant();
    const agents = [await t.agent(), await t.agent()];
    const rows = [...fixture(agents, "2024-05-01", 300, 7), ...fixture(agents, "2024-05-02", 120, 11)];
    await insert(t.tenant, rows);
    // Another tenant's rows at the same times, under the same agent ids: never counted.
    const other = await tenant();
    await insert(other.tenant, fixture(agents, "2024-05-01", 50, 3));

    const hourly = await t.call("GET", q("2024-05-01T00:00:00Z", "2024-05-02T23:59:59.999Z", "&bucket=hour"));
    expect(hourly.status).toBe(200);
    expect(Object.keys(hourly.json)).toEqual(["data"]);
    expectRows(hourly.json.data, expected(rows, "hour"));
    expect(hourly.json.data).toHaveLength(12); // 2 days × 3 hours × 2 agents

    const daily = await t.call("GET", q("2024-05-01T00:00:00Z", "2024-05-02T23:59:59.999Z", "&bucket=day"));
    expectRows(daily.json.data, expected(rows, "day"));
    expect(daily.json.data).toHaveLength(4);

    const one = await t.call(
      "GET",
      q("2024-05-01T00:00:00Z", "2024-05-02T23:59:59.999Z", `&bucket=day&agent_id=${agents[1]}`),
    );
    expectRows(
      one.json.data,
      expected(
        rows.filter((r) => r.agent_id === agents[1]),
        "day",
      ),
    );

    // The other tenant sees only its own rows, and 404 for the first tenant's agent.
    const theirs = await other.call("GET", q("2024-05-01T00:00:00Z", "2024-05-01T23:59:59Z", "&bucket=day"));
    expect(theirs.json.data.reduce((n: number, r: { invocations: number }) => n + r.invocations, 0)).toBe(50);
  });

  it('bounds are inclusive; a bucket without latencies or settlements reports null and "0"', async () => {
    const t = await tenant();
    const agent = await t.agent();
    const base = {
      agent_id: agent,
      req_size: null,
      resp_size: null,
      settlement_status: null,
      settled_amount: null,
    };
    await insert(t.tenant, [
      { ...base, status: "pending", latency_ms: null, created_at: "2024-05-01T00:00:00Z" },
      { ...base, status: "running", latency_ms: null, created_at: "2024-05-01T00:59:59.999Z" },
      { ...base, status: "succeeded", latency_ms: 10, created_at: "2024-05-01T01:00:00Z" },
      { ...base, status: "succeeded", latency_ms: 20, created_at: "2024-05-01T01:00:00.001Z" },
      { ...base, status: "succeeded", latency_ms: 99, created_at: "2024-04-30T23:59:59.999Z" },
    ]);
    const res = await t.call("GET", q("2024-05-01T00:00:00Z", "2024-05-01T01:00:00Z"));
    expect(res.status).toBe(200);
    expect(res.json.data).toEqual([
      {
        agent_id: agent,
        bucket_start: "2024-05-01T00:00:00.000Z",
        invocations: 2,
        succeeded: 0,
        failed: 0,
        latency_ms_p50: null,
        latency_ms_p95: null,
        latency_ms_p99: null,
        req_bytes: 0,
        resp_bytes: 0,
        settled_amount: "0",
      },
      {
        agent_id: agent,
        bucket_start: "2024-05-01T01:00:00.000Z",
        invocations: 1,
        succeeded: 1,
        failed: 0,
        latency_ms_p50: 10,
        latency_ms_p95: 10,
        latency_ms_p99: 10,
        req_bytes: 0,
        resp_bytes: 0,
        settled_amount: "0",
      },
    ]);
  });

  it("defaults to the last 24 hours by hour", async () => {
    const t = await tenant();
    const agent = await t.agent();
    const base = {
      agent_id: agent,
      req_size: 1,
      resp_size: 2,
      settlement_status: null,
      settled_amount: null,
    };
    await insert(t.tenant, [
      {
        ...base,
        status: "succeeded",
        latency_ms: 5,
        created_at: new Date(Date.now() - 3_600_000).toISOString(),
      },
      {
        ...base,
        status: "succeeded",
        latency_ms: 5,
        created_at: new Date(Date.now() - 25 * 3_600_000).toISOString(),
      },
    ]);
    const res = await t.call("GET", "/v1/analytics");
    expect(res.status).toBe(200);
    expect(res.json.data).toHaveLength(1);
    expect(res.json.data[0].bucket_start).toMatch(/T\d\d:00:00\.000Z$/);
    expect(res.json.data[0]).toMatchObject({ invocations: 1, req_bytes: 1, resp_bytes: 2 });
  });

  it("a deleted agent's history stays readable", async () => {
    const t = await tenant();
    const agent = await t.agent();
    await insert(t.tenant, [
      {
        agent_id: agent,
        status: "failed",
        latency_ms: 1,
        req_size: 1,
        resp_size: 1,
        created_at: "2024-05-01T00:00:00Z",
        settlement_status: null,
        settled_amount: null,
      },
    ]);
    await t.call("DELETE", `/v1/agents/${agent}`);
    const res = await t.call("GET", q("2024-05-01T00:00:00Z", "2024-05-01T01:00:00Z", `&agent_id=${agent}`));
    expect(res.status).toBe(200);
    expect(res.json.data[0]).toMatchObject({ invocations: 1, failed: 1 });
  });

  it.each([
    ["a window over 31 days", "?since=2024-01-01T00:00:00Z&until=2024-02-01T00:00:00.001Z", /31 days/],
    ["a window over 31 days from a default until", "?since=2000-01-01T00:00:00Z", /31 days/],
    ["since after until", "?since=2024-05-02T00:00:00Z&until=2024-05-01T00:00:00Z", /since/],
    ["an unknown bucket", "?bucket=week", /bucket/],
    ["a malformed until", "?until=2024-05-01T00:00:00", /until/],
    ["year zero", "?since=0000-01-01T00:00:00Z&until=0000-01-01T01:00:00Z", /since/],
  ])("%s → 400", async (_name, query, message) => {
    const t = await tenant();
    const res = await t.call("GET", `/v1/analytics${query}`);
    expect(res.status).toBe(400);
    expect(res.json.error).toMatch(message);
  });

  it("exactly 31 days by day is accepted", async () => {
    const t = await tenant();
    const res = await t.call("GET", q("2024-01-01T00:00:00Z", "2024-02-01T00:00:00Z", "&bucket=day"));
    expect(res.status).toBe(200);
    expect(res.json).toEqual({ data: [] });
  });

  it("another tenant's, an unknown or a malformed agent filter → 404; 401 without a token", async () => {
    const a = await tenant();
    const b = await tenant();
    const agent = await a.agent();
    for (const id of [agent, "agt_nope", "", `agt_${randomUUID()}`]) {
      const res = await b.call("GET", `/v1/analytics?agent_id=${id}`);
      expect(res.status, id).toBe(404);
      expect(res.json).toEqual({ error: "agent not found" });
    }
    const anon = await client(app.url)("GET", "/v1/analytics");
    expect(anon.status).toBe(401);
    expect(anon.text).toBe("");
  });
});

describe("GET /v1/analytics/summary", () => {
  it("the whole tenant over the window: counts and percentiles over every call of every agent, never another tenant's", async () => {
    const t = await tenant();
    const other = await tenant();
    const [a, b] = [await t.agent(), await t.agent()];
    const at = (min: number) => new Date(Date.parse("2024-05-01T10:00:00Z") + min * 60_000).toISOString();
    const row = (
      agent_id: string,
      min: number,
      latency_ms: number | null,
      status: Inv["status"] = "succeeded",
    ) =>
      ({
        agent_id,
        status,
        created_at: at(min),
        latency_ms,
        req_size: 1,
        resp_size: 1,
        settlement_status: null,
        settled_amount: null,
      }) satisfies Inv;
    // Agent a is fast, agent b slow: the tenant's p95 is neither agent's own p95.
    const rows = [
      ...[3, 4, 5, 6, 7, 8, 9, 10].map((ms, i) => row(a, i, ms)),
      row(b, 10, 400),
      row(b, 20, 900, "failed"),
      row(b, 30, null, "failed"),
      row(a, 90, 1), // outside the window
    ];
    await insert(t.tenant, rows);
    await insert(other.tenant, [row(await other.agent(), 5, 10_000)]);
    const res = await t.call("GET", `/v1/analytics/summary?since=${at(0)}&until=${at(59)}`);
    expect(res.status).toBe(200);
    const latencies = rows.slice(0, 11).flatMap((r) => (r.latency_ms === null ? [] : [r.latency_ms]));
    expect(res.json).toEqual({
      since: at(0),
      until: at(59),
      invocations: 11,
      succeeded: 9,
      failed: 2,
      latency_ms_p50: 7.5,
      // percentile_cont gives 674.9999999999995 here: rounded in SQL to 0.001 ms.
      latency_ms_p95: 675,
      latency_ms_p99: 855,
    });
    expect(ms3(percentileCont(latencies, 0.95))).toBe(675);
    const empty = await other.call("GET", `/v1/analytics/summary?since=${at(30)}&until=${at(59)}`);
    expect(empty.json).toMatchObject({ invocations: 0, latency_ms_p95: null });
  });

  it("a bad or reversed window is a 400 naming it; 401 without a token", async () => {
    const t = await tenant();
    for (const query of [
      "since=yesterday",
      "since=2024-02-01T00:00:00Z&until=2024-01-01T00:00:00Z",
      "since=2024-01-01T00:00:00Z&until=2024-03-01T00:00:00Z",
    ]) {
      const res = await t.call("GET", `/v1/analytics/summary?${query}`);
      expect(res.status, query).toBe(400);
      expect(res.json.error, query).toMatch(/since|until|window/);
    }
    const anon = await client(app.url)("GET", "/v1/analytics/summary");
    expect(anon.status).toBe(401);
  });
});

describe("capabilities", () => {
  it("reports the analytics and agent event surfaces and their window limits", async () => {
    const t = await tenant();
    const res = await t.call("GET", "/v1/capabilities");
    expect(res.json.surfaces).toMatchObject({ analytics: true, agent_events: true });
    expect(res.json.limits).toMatchObject({ analytics_max_range_days: 31, agent_event_max_range_days: 31 });
  });
});
