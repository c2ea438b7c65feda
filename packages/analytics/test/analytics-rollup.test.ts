// @stores both: the rollup is SQL over the invocation table, run by each store's engine.
import { randomUUID } from "node:crypto";
import { migrate, openStore, type Query, type Store, type Transact } from "@gw/db";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { analyticsRepo, ROLLUP_AFTER_MS } from "../src/repos/analytics.ts";

// Day buckets of closed days come from the rollup (ADR 0007): they must be exactly what the live
// computation gives, the first read rolls them up once, and partial days at the window's edges
// are still computed live. Real Postgres when DATABASE_URL is set, else the embedded store.

const DAY = 86_400_000;
let store: Store;

beforeAll(async () => {
  store = await openStore(process.env.DATABASE_URL);
  await migrate(store);
});
afterAll(async () => {
  await store?.close();
});

/** Rows over the last `days` full days for two agents, with latencies, sizes and settlements. */
async function seed(tenant: string, agents: string[], days: number) {
  await store.query(
    `insert into invocations (id, tenant_id, agent_id, mode, status, latency_ms, req_size, resp_size,
       settlement, settlement_status, created_at)
     select 'inv_' || gen_random_uuid(), $1, ($2::text[])[1 + (i % 2)], 'transactional',
       case when i % 10 = 0 then 'failed' else 'succeeded' end,
       case when i % 17 = 0 then null else (i * 37) % 1000 end, i % 300, i % 700,
       case when i % 5 = 0 then jsonb_build_object('status', 'settled', 'settled_amount', (i * 1000)::text) end,
       case when i % 5 = 0 then 'settled' end,
       now() - make_interval(secs => (i * 86400.0 * $3 / 1000) + 7200)
     from generate_series(1, 1000) as i`,
    [tenant, agents, days],
  );
}

describe("analytics rollup of closed days", () => {
  it("gives exactly the live figures, rolls up once, and keeps partial edge days live", async () => {
    const tenant = `t-${randomUUID()}`;
    const agents = [`agt_${randomUUID()}`, `agt_${randomUUID()}`];
    await seed(tenant, agents, 12);
    // A window with partial days at both ends, its middle days long closed.
    const now = Date.now();
    const q = {
      since: new Date(now - 12.5 * DAY),
      until: new Date(now - 0.25 * DAY),
      bucket: "day" as const,
    };
    const live = await analyticsRepo.live(store.query, tenant, q);
    expect(live.length).toBeGreaterThan(10);

    const first = await analyticsRepo.buckets(store.transaction, tenant, q, now);
    expect(first).toEqual(live);
    const done = await store.query(
      "select count(*)::int as n from invocation_days_done where tenant_id = $1",
      [tenant],
    );
    const expectedDays = Math.floor((q.until.getTime() - Math.ceil(q.since.getTime() / DAY) * DAY) / DAY);
    // Whole days inside the window that closed ROLLUP_AFTER_MS ago were rolled up, once.
    expect(done[0]?.n).toBeGreaterThanOrEqual(expectedDays - Math.ceil(ROLLUP_AFTER_MS / DAY) - 1);
    expect(done[0]?.n).toBeGreaterThan(0);

    // A second read is served from the rollup: change a rolled day's rows and it does not move.
    const rolled = await store.query(
      "select day from invocation_days where tenant_id = $1 order by day limit 1",
      [tenant],
    );
    const day = new Date(rolled[0]?.day as string | Date).getTime();
    await store.query(
      "update invocations set latency_ms = 999999 where tenant_id = $1 and created_at >= $2 and created_at < $3",
      [tenant, new Date(day).toISOString(), new Date(day + DAY).toISOString()],
    );
    const second = await analyticsRepo.buckets(store.transaction, tenant, q, now);
    expect(second).toEqual(first);

    // The agent filter reads the same rollup.
    const one = await analyticsRepo.buckets(store.transaction, tenant, { ...q, agentId: agents[0] }, now);
    expect(one).toEqual(first.filter((r) => r.agentId === agents[0]));
  });

  it("hour buckets and windows of open days are always live", async () => {
    const tenant = `t-${randomUUID()}`;
    const agents = [`agt_${randomUUID()}`, `agt_${randomUUID()}`];
    await seed(tenant, agents, 3);
    const now = Date.now();
    const q = { since: new Date(now - 3 * DAY), until: new Date(now), bucket: "hour" as const };
    expect(await analyticsRepo.buckets(store.transaction, tenant, q, now)).toEqual(
      await analyticsRepo.live(store.query, tenant, q),
    );
    const open = { since: new Date(now - 0.9 * DAY), until: new Date(now), bucket: "day" as const };
    expect(await analyticsRepo.buckets(store.transaction, tenant, open, now)).toEqual(
      await analyticsRepo.live(store.query, tenant, open),
    );
    const done = await store.query(
      "select count(*)::int as n from invocation_days_done where tenant_id = $1",
      [tenant],
    );
    expect(done[0]?.n).toBe(0);
  });

  it("a read's live statements run with its settings, which end with its transaction", async () => {
    const tenant = `t-${randomUUID()}`;
    await seed(tenant, [`agt_${randomUUID()}`, `agt_${randomUUID()}`], 3);
    const now = Date.now();
    const setting = (query: Query) =>
      query("select current_setting('work_mem') as w, current_setting('jit') as j", []);
    const before = await store.transaction(setting);
    const seen: unknown[] = [];
    const spying: Transact = (fn) =>
      store.transaction((query) =>
        fn(async (text, params) => {
          if (text.startsWith("with agg")) seen.push(...(await setting(query)));
          return query(text, params);
        }),
      );
    const q = { since: new Date(now - 3 * DAY), until: new Date(now), bucket: "day" as const };
    expect(await analyticsRepo.buckets(spying, tenant, q, now)).toEqual(
      await analyticsRepo.live(store.query, tenant, q),
    );
    expect(seen.length).toBeGreaterThan(0);
    for (const s of seen) expect(s).toEqual({ w: "16MB", j: "off" });
    expect(await store.transaction(setting)).toEqual(before);
  });
});
