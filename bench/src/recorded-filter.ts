// `pnpm bench:recorded [--reseed] [--keep] [--runs N]`: seeds 1,000,000 invocations for one tenant
// into DATABASE_URL (in SQL) with the protocols' recorded fields filled as calls fill them, then
// times the invocation list (`GET /v1/invocations`' repository read: a page of 50 and its total)
// filtered by each recorded field's filter, and prints p50/p99 and each plan (ADR 0042). The seed
// is removed at the end; `--keep` leaves it for the next run to reuse. See docs/performance.md.
import type { Store } from "@gw/db";
import { listInvocations } from "@gw/invocations";
import { SEEDED_ROWS as ROWS, RUNS, seedInvocations, timed, withSeed } from "./seeded.ts";

const TOOLS = 200;
const TENANT = "t_bench_recorded";

/**
 * 1M rows over 31 days in time order: 60 % MCP (80 % `tools/call` over 200 tools, 20 %
 * `tools/list`), 30 % A2A (`message/send`, five calls per task, each task's context), 10 % HTTP;
 * one call of a tool called once (`rare`). 90 % succeeded, 8 % failed, 2 % pending.
 */
function seed(store: Store, end: Date) {
  return seedInvocations(store, TENANT, async () => {
    await store.query(
      `insert into invocations (id, tenant_id, agent_id, mode, status, latency_ms, created_at, completed_at,
       mcp_method, mcp_tool, a2a_method, a2a_task_id, a2a_context_id, a2a_task_state)
     select 'inv_' || gen_random_uuid(), $1,
       'agt_00000000-0000-7000-8000-' || lpad((g % 10)::text, 12, '0'),
       case when g % 7 = 0 then 'streaming' else 'transactional' end,
       s.status,
       case when s.status <> 'pending' then (-ln(1 - random()) * 200)::bigint end,
       s.created_at,
       case when s.status <> 'pending' then s.created_at + interval '1 second' end,
       case when s.p = 'mcp' then (case when g % 5 = 0 then 'tools/list' else 'tools/call' end) end,
       case when s.p = 'mcp' and g % 5 <> 0 then 'tool-' || ((g / 10) % ${TOOLS}) end,
       case when s.p = 'a2a' then 'message/send' end,
       case when s.p = 'a2a' then 'task-' || (g / 50) end,
       case when s.p = 'a2a' then 'ctx-' || (g / 50) end,
       case when s.p = 'a2a' then 'completed' end
     from (
       select g,
         case when g % 10 < 6 then 'mcp' when g % 10 < 9 then 'a2a' else 'http' end as p,
         case when r < 0.90 then 'succeeded' when r < 0.98 then 'failed' else 'pending' end as status,
         $2::timestamptz - interval '31 days' + (g::float8 / ${ROWS}) * interval '31 days' - random() * interval '1 second' as created_at
       from (select g, random() as r from generate_series(1, ${ROWS}) as g) as x
     ) as s`,
      [TENANT, end.toISOString()],
    );
    // One call of a tool called nowhere else, early in the window: the filter's worst case.
    await store.query(
      `update invocations set mcp_tool = 'rare' where id = (select id from invocations
         where tenant_id = $1 and mcp_tool is not null order by created_at limit 1)`,
      [TENANT],
    );
  });
}

type Filter = Parameters<typeof listInvocations>[0]["filter"];

async function measure(store: Store, name: string, recorded: Filter["recorded"]) {
  const list = () =>
    listInvocations({ ctx: { db: store.db, tenantId: TENANT }, filter: { limit: 50, offset: 0, recorded } });
  const { p50, p99, last } = await timed(list);
  console.log(
    `\n## ${name}: ${last.rows.length} on the page of ${last.total}; ${RUNS} runs: p50 ${p50} ms, p99 ${p99} ms`,
  );
  return { name, total: last.total, p50, p99 };
}

process.exitCode = await withSeed(TENANT, seed, async (store) => {
  const results = [
    await measure(store, "tool (one of 200)", { tool: "tool-7" }),
    await measure(store, "tool (called once)", { tool: "rare" }),
    await measure(store, "a2a_task_id (5 calls)", { a2a_task_id: "task-4242" }),
    await measure(store, "method (A2A, 30 %)", { method: "message/send" }),
    await measure(store, "no filter", {}),
  ];
  console.log("\n| filter | matching | p50 ms | p99 ms |\n|---|---|---|---|");
  for (const r of results) console.log(`| ${r.name} | ${r.total} | ${r.p50} | ${r.p99} |`);
});
