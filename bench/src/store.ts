import { openStore, type Store } from "@gw/db";

/**
 * The bench's own look at the gateway's Postgres: how many of an agent's invocations are still
 * open, and when the last one completed. Read straight from the store through the open entries,
 * so that waiting for the worker does not load the Postgres being measured (the control plane's
 * filtered `total` visits every row of the agent: tens of thousands by the end of a run).
 */
export type BenchStore = {
  /** Whether the agent has an invocation still pending or running. */
  anyOpen: (tenantId: string, agentId: string) => Promise<boolean>;
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
   * The WAL between two positions that touched this database's relations (pg_walinspect), in
   * bytes: what the run wrote, without what other databases of the same server wrote meanwhile.
   * Null when the extension cannot be used (not installed, or the segments already recycled).
   */
  walOfDatabase: (from: number, to: number) => Promise<number | null>;
  /**
   * The same WAL by relation and record type (`invocations: Heap/INSERT`), bytes and bytes of
   * full-page images each, largest first; null as for `walOfDatabase`.
   */
  walByRelation: (from: number, to: number) => Promise<WalShare[] | null>;
  /** The server processes serving this database's connections (their CPU is the run's). */
  backendPids: () => Promise<Set<number>>;
  /**
   * Adds `agents` agents to the tenant and `invocations` finished invocation rows across them
   * (generate_series, one statement each), then vacuums and analyzes: a store that has been busy.
   */
  seed: (tenantId: string, n: { agents: number; invocations: number }) => Promise<void>;
  /** Updates of `invocations` so far, and how many of them were HOT (pg_stat_user_tables). */
  invocationUpdates: () => Promise<{ updated: number; hot: number }>;
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
  /**
   * Every bench tenant's rows (`bench-…`: the run's own and its steps'), so the database, often the
   * test suites' own, is left as the run found it.
   */
  removeBenchTenants: () => Promise<void>;
  close: () => Promise<void>;
};

/** A relation's share of a stretch of WAL: its records of one type, and their full-page images. */
export type WalShare = { relation: string; record: string; count: number; bytes: number; fpiBytes: number };

const lsn = (b: number) => `${Math.floor(b / 2 ** 32).toString(16)}/${(b % 2 ** 32).toString(16)}`;

export async function benchStore(url: string): Promise<BenchStore> {
  const store: Store = await openStore(url, { maxConnections: 1 });
  const vacuum = async () => {
    const [row] = await store.query("select current_setting('autovacuum') as on", []);
    if (row?.on === "on") return false;
    await store.query("vacuum (analyze) invocations, invocation_requests, invocation_results", []);
    return true;
  };
  return {
    async anyOpen(tenantId, agentId) {
      // Whether one open row is left, not how many: the bench asks every 50 ms while the worker
      // drains a backlog of thousands, and a count of them loaded the Postgres being measured.
      // Through the open entries (ADR 0046): no index of invocations reads completed_at.
      const [row] = await store.query(
        `select exists (select 1 from (select invocation_id from invocation_requests
           union all select invocation_id from invocation_open) o join invocations i on i.id = o.invocation_id
         where i.mode = 'transactional' and i.completed_at is null and i.tenant_id = $1 and i.agent_id = $2) as any`,
        [tenantId, agentId],
      );
      return row?.any === true;
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
    async walOfDatabase(from, to) {
      try {
        await store.query("create extension if not exists pg_walinspect", []);
        const [row] = await store.query(
          `select coalesce(sum(record_length), 0)::int8::text as b
           from pg_get_wal_records_info($1::pg_lsn, $2::pg_lsn)
           where block_ref like '%/' || (select oid from pg_database where datname = current_database()) || '/%'`,
          [lsn(from), lsn(to)],
        );
        return Number(row?.b ?? 0);
      } catch {
        return null;
      }
    },
    async walByRelation(from, to) {
      try {
        // A record's first block names its relation (rel <tablespace>/<database>/<filenode>).
        const rows = await store.query(
          `with r as (
             select resource_manager || '/' || split_part(record_type, ' ', 1) as record, record_length, fpi_length,
               (regexp_match(block_ref, 'rel [0-9]+/([0-9]+)/([0-9]+)')) as rel
             from pg_get_wal_records_info($1::pg_lsn, $2::pg_lsn))
           select coalesce(c.relname, r.rel[2]) as relation, r.record, count(*)::int8::text as count,
             sum(r.record_length)::int8::text as bytes, sum(r.fpi_length)::int8::text as fpi
           from r left join pg_class c on c.relfilenode = r.rel[2]::oid
           where r.rel[1]::oid = (select oid from pg_database where datname = current_database())
           group by 1, 2 order by sum(r.record_length) desc`,
          [lsn(from), lsn(to)],
        );
        return rows.map((r) => ({
          relation: String(r.relation),
          record: String(r.record),
          count: Number(r.count),
          bytes: Number(r.bytes),
          fpiBytes: Number(r.fpi),
        }));
      } catch {
        return null;
      }
    },
    async backendPids() {
      const rows = await store.query(
        "select pid from pg_stat_activity where datname = current_database() and pid <> pg_backend_pid()",
        [],
      );
      return new Set(rows.map((r) => Number(r.pid)));
    },
    async seed(tenantId, n) {
      await store.query(
        `insert into agents (id, tenant_id, name, upstream_url, created_by)
         select 'agt_seed_' || g, $1, 'seeded ' || g, 'http://127.0.0.1:9/seeded', 'bench'
         from generate_series(1, $2::int) g`,
        [tenantId, n.agents],
      );
      await store.query(
        `insert into invocations (id, tenant_id, agent_id, mode, status, upstream_status, latency_ms, ttft_ms,
           req_size, resp_size, attempts, created_at, started_at, completed_at)
         select 'inv_seed_' || lpad(g::text, 8, '0'), $1, 'agt_seed_' || (1 + g % $2::int),
           case when g % 2 = 0 then 'streaming' else 'transactional' end,
           'succeeded', 200, 5 + g % 50, 2 + g % 10, 30, 60, 1,
           now() - make_interval(secs => g * 2), now() - make_interval(secs => g * 2), now() - make_interval(secs => g * 2 - 1)
         from generate_series(1, $3::int) g`,
        [tenantId, n.agents, n.invocations],
      );
      await store.query("vacuum (analyze) agents, invocations", []);
    },
    async invocationUpdates() {
      await store.query("select pg_stat_clear_snapshot()", []);
      const [row] = await store.query(
        "select n_tup_upd::int8::text as u, n_tup_hot_upd::int8::text as h from pg_stat_user_tables where relname = 'invocations'",
        [],
      );
      return { updated: Number(row?.u ?? 0), hot: Number(row?.h ?? 0) };
    },
    vacuumIfNoAutovacuum: vacuum,
    async removeTenant(tenantId) {
      await removeWhere(store, "tenant_id = $1", tenantId);
      await vacuum();
    },
    async removeBenchTenants() {
      await removeWhere(store, "tenant_id like $1", "bench-%");
      await vacuum();
    },
    close: () => store.close(),
  };
}

/** Deletes the rows of every table with a `tenant_id` column that match `where` ($1 = `value`). */
async function removeWhere(store: Store, where: string, value: string): Promise<void> {
  const tables = await store.query(
    `select table_name from information_schema.columns
     where table_schema = current_schema() and column_name = 'tenant_id'`,
    [],
  );
  for (const { table_name } of tables)
    await store.query(`delete from "${String(table_name)}" where ${where}`, [value]);
}
