// `pnpm bench:analytics [--reseed] [--keep] [--runs N]`: seeds 1,000,000 invocations for one tenant
// into DATABASE_URL (in SQL, in seconds), then times the read of GET /v1/analytics for a 31-day window
// by day and a 1-day window by hour, and prints p50/p99 and the plans of the statements a read runs
// over the invocations (its live parts). The seed is removed at the end (the database is often the
// test suites' own, whose whole-table checks it would slow down);
// `--keep` leaves it for the next run to reuse. See docs/performance.md.
import { analyticsRepo } from "@gw/analytics";
import type { Store, Transact } from "@gw/db";
import { SEEDED_ROWS as ROWS, RUNS, seedInvocations, timed, withSeed } from "./seeded.ts";

const AGENTS = 20;
const TENANT = "t_bench_analytics";
const DAY = 86_400_000;

/**
 * 1M rows spread evenly over the 31 days before `end`, written in time order: 20 agents, 90 % succeeded, 8 % failed,
 * 2 % still pending (no latency), exponential latencies around 200 ms, 10 % settled payments.
 */
function seed(store: Store, end: Date) {
  return seedInvocations(store, TENANT, async () => {
    await store.query(
      `insert into invocations (id, tenant_id, agent_id, mode, status, error_class, latency_ms, req_size,
       resp_size, settlement, settlement_status, created_at, completed_at)
     select 'inv_' || gen_random_uuid(), $1,
       'agt_00000000-0000-7000-8000-' || lpad((g % ${AGENTS})::text, 12, '0'),
       case when g % 10 = 0 then 'streaming' else 'transactional' end,
       s.status,
       case when s.status = 'failed' then 'upstream_5xx' end,
       case when s.status <> 'pending' then (-ln(1 - random()) * 200)::bigint end,
       case when s.status <> 'pending' then (random() * 4096)::bigint end,
       case when s.status <> 'pending' then (random() * 65536)::bigint end,
       case when s.paid then jsonb_build_object('status', 'settled', 'settled_amount', (floor(random() * 1e6))::text) end,
       case when s.paid then 'settled' end,
       s.created_at,
       case when s.status <> 'pending' then s.created_at + interval '1 second' end
     from (
       select g,
         case when r < 0.90 then 'succeeded' when r < 0.98 then 'failed' else 'pending' end as status,
         random() < 0.1 as paid,
         -- Rows arrive in time order, as the proxy writes them; a second of jitter.
         $2::timestamptz - interval '31 days' + (g::float8 / ${ROWS}) * interval '31 days' - random() * interval '1 second' as created_at
       from (select g, random() as r from generate_series(1, ${ROWS}) as g) as x
     ) as s`,
      [TENANT, end.toISOString()],
    );
  });
}

async function measure(store: Store, name: string, q: Parameters<typeof analyticsRepo.buckets>[2]) {
  const { p50, p99, last } = await timed(() => analyticsRepo.buckets(store.transaction, TENANT, q));
  const groups = last.length;
  console.log(`\n## ${name}: ${groups} rows out; ${RUNS} runs: p50 ${p50} ms, p99 ${p99} ms`);
  // The plans of the statements one read runs over the invocations (its live parts), in the
  // read's transaction with its settings: what it ran is recorded, then run again explained.
  const ran: Array<{ text: string; params: unknown[] }> = [];
  const recording: Transact = (fn) =>
    store.transaction((query) =>
      fn((text, params) => {
        ran.push({ text, params });
        return query(text, params);
      }),
    );
  await analyticsRepo.buckets(recording, TENANT, q);
  await store.transaction(async (query) => {
    for (const { text, params } of ran) {
      if (!text.startsWith("with agg")) {
        if (text.includes("set_config")) await query(text, params);
        continue;
      }
      console.log(`\n# live part [${String(params[1])}, ${String(params[2])}]`);
      const plan = await query(`explain (analyze, buffers) ${text}`, params);
      console.log(plan.map((r) => r["QUERY PLAN"]).join("\n"));
    }
  });
  return { name, groups, p50, p99 };
}

process.exitCode = await withSeed(TENANT, seed, async (store) => {
  // The window ends at the top of the hour after the newest seeded row, so reruns measure the same rows.
  const [last] = await store.query("select max(created_at) as last from invocations where tenant_id = $1", [
    TENANT,
  ]);
  const until = new Date(Math.ceil(new Date(String(last?.last)).getTime() / 3_600_000) * 3_600_000);
  const results = [
    await measure(store, "31 days by day", {
      since: new Date(until.getTime() - 31 * DAY),
      until,
      bucket: "day",
    }),
    await measure(store, "1 day by hour", { since: new Date(until.getTime() - DAY), until, bucket: "hour" }),
  ];
  console.log("\n| query | rows out | p50 ms | p99 ms |\n|---|---|---|---|");
  for (const r of results) console.log(`| ${r.name} | ${r.groups} | ${r.p50} | ${r.p99} |`);
});
