import { openStore, type Store } from "@gw/db";

/**
 * The bench's own look at the gateway's Postgres: how many of an agent's invocations are still
 * open, and when the last one completed. Read straight from the store through the open-row index,
 * so that waiting for the worker does not load the Postgres being measured (the control plane's
 * filtered `total` visits every row of the agent: tens of thousands by the end of a run).
 */
export type BenchStore = {
  /** Invocations of the agent still pending or running. */
  open: (tenantId: string, agentId: string) => Promise<number>;
  /** The agent's invocations created at or after `since`: how many ended each way, and the last succeeded one's `completed_at` (ms). */
  completions: (
    tenantId: string,
    agentId: string,
    since: Date,
  ) => Promise<{ succeeded: number; failed: number; last: number }>;
  /**
   * The run's failed invocations by mode and error class, with how long the rows had waited and
   * run: no step expects one, and only the end-to-end step checks its own.
   */
  failures: (tenantId: string) => Promise<Array<Record<string, string | number | null>>>;
  /** Postgres's current WAL position, in bytes: the difference over a step is the WAL it wrote. */
  walBytes: () => Promise<number>;
  /**
   * With autovacuum off (some CI images turn it off), dead row versions pile up across steps and
   * the planner has no statistics: vacuum and analyze the invocation tables between steps, as
   * autovacuum would on any production Postgres. Returns whether it did.
   */
  vacuumIfNoAutovacuum: () => Promise<boolean>;
  /**
   * Deletes every row of the run's tenant (each table with a `tenant_id`), then vacuums where
   * autovacuum is off: a run leaves ~100,000 invocations, and the bench shares its database with
   * the test suite, whose secret sweep reads every table whole.
   */
  removeTenant: (tenantId: string) => Promise<void>;
  close: () => Promise<void>;
};

export async function benchStore(url: string): Promise<BenchStore> {
  const store: Store = await openStore(url, { maxConnections: 1 });
  const vacuum = async () => {
    const [row] = await store.query("select current_setting('autovacuum') as on", []);
    if (row?.on === "on") return false;
    await store.query("vacuum (analyze) invocations, invocation_requests, invocation_results", []);
    return true;
  };
  return {
    async open(tenantId, agentId) {
      const [row] = await store.query(
        `select count(*)::int as n from invocations
         where mode = 'transactional' and completed_at is null and tenant_id = $1 and agent_id = $2`,
        [tenantId, agentId],
      );
      return Number(row?.n ?? 0);
    },
    async completions(tenantId, agentId, since) {
      const [row] = await store.query(
        `select count(*) filter (where status = 'succeeded')::int as succeeded,
                count(*) filter (where status = 'failed')::int as failed,
                max(completed_at) filter (where status = 'succeeded') as last
         from invocations where tenant_id = $1 and agent_id = $2 and created_at >= $3::timestamptz`,
        [tenantId, agentId, since.toISOString()],
      );
      return {
        succeeded: Number(row?.succeeded ?? 0),
        failed: Number(row?.failed ?? 0),
        last: new Date(String(row?.last)).getTime(),
      };
    },
    async failures(tenantId) {
      const rows = await store.query(
        `select mode, error_class, count(*)::int as n, count(started_at)::int as started,
                max(attempts)::int as max_attempts,
                round(max(extract(epoch from coalesce(started_at, completed_at) - created_at))::numeric, 1)::float8 as max_wait_s,
                round(max(extract(epoch from completed_at - started_at))::numeric, 1)::float8 as max_run_s,
                min(created_at)::text as first_created, max(created_at)::text as last_created
         from invocations where tenant_id = $1 and status = 'failed' group by 1, 2 order by 3 desc`,
        [tenantId],
      );
      return rows.map((r) => ({ ...r }) as Record<string, string | number | null>);
    },
    async walBytes() {
      const [row] = await store.query("select pg_wal_lsn_diff(pg_current_wal_lsn(), '0/0')::text as b", []);
      return Number(row?.b ?? 0);
    },
    vacuumIfNoAutovacuum: vacuum,
    async removeTenant(tenantId) {
      const tables = await store.query(
        `select table_name from information_schema.columns
         where table_schema = current_schema() and column_name = 'tenant_id'`,
        [],
      );
      for (const { table_name } of tables)
        await store.query(`delete from "${String(table_name)}" where tenant_id = $1`, [tenantId]);
      await vacuum();
    },
    close: () => store.close(),
  };
}
