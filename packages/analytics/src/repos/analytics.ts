import type { Query, Transact } from "@gw/db";

export type AnalyticsBucket = "hour" | "day";

export type AnalyticsQuery = {
  since: Date;
  until: Date;
  bucket: AnalyticsBucket;
  agentId?: string | undefined;
};

export type AnalyticsRow = {
  agentId: string;
  bucketStart: Date;
  invocations: number;
  succeeded: number;
  failed: number;
  latencyMsP50: number | null;
  latencyMsP95: number | null;
  latencyMsP99: number | null;
  reqBytes: number;
  respBytes: number;
  /** Exact decimal sum of settled amounts in the asset's smallest unit; "0" when none. */
  settledAmount: string;
};

// UTC buckets through date_bin (the same UTC buckets as date_trunc with a zone, and immutable).
// The rows of a window are a range of the (tenant, created_at) index, or of the (tenant, agent,
// created_at) one for one agent; closed days come from the rollup (ADR 0007), so a live read
// covers the days not rolled up yet. No index holds the aggregate's columns: each would cost every
// invocation two more index entries on the write path (ADR 0037).
const ORIGIN = "timestamptz '2000-01-01 00:00:00+00'";
const bin = (unit: string, col: string) => `date_bin(interval '1 ${unit}', ${col}, ${ORIGIN})`;
/** What every bucket shows, computed the same way live and for the rollup. */
const AGGREGATES = `count(*) as invocations,
  count(*) filter (where status = 'succeeded') as succeeded,
  count(*) filter (where status = 'failed') as failed,
  percentile_cont(array[0.5, 0.95, 0.99]) within group (order by latency_ms) as pcts,
  coalesce(sum(req_size), 0) as req_bytes,
  coalesce(sum(resp_size), 0) as resp_bytes`;
/**
 * The three percentiles as the API shows them, rounded to 0.001 ms here in SQL: percentile_cont
 * interpolates in float8, so 674.9999999999995 becomes 675. Applied where the figures are read
 * (live, rolled up, summary); the rollup keeps what percentile_cont computed.
 */
const roundedPcts = (col: string) =>
  `array[round(${col}[1]::numeric, 3), round(${col}[2]::numeric, 3), round(${col}[3]::numeric, 3)]::float8[] as pcts`;
const DAY_OF_CREATED = `date_bin('1 day'::interval, created_at, '2000-01-01 00:00:00+00'::timestamptz)`;

/**
 * One statement per bucket unit and filter shape, constant text, so postgres-js prepares each
 * once. Settled amounts come from their own partial index (few rows are settled), joined per group.
 */
function statement(bucket: AnalyticsBucket, byAgent: boolean): string {
  const where = `tenant_id = $1 and created_at >= $2 and created_at <= $3${byAgent ? " and agent_id = $4" : ""}`;
  const b = bucket === "day" ? DAY_OF_CREATED : bin("hour", "created_at");
  return `with agg as (
    select ${b} as bucket_start, agent_id,
      ${AGGREGATES}
    from invocations
    where ${where}
    group by 1, 2
  ), paid as (
    select ${b} as bucket_start, agent_id, sum((settlement ->> 'settled_amount')::numeric) as amount
    from invocations
    where tenant_id = $1 and created_at >= $2 and created_at <= $3${byAgent ? " and agent_id = $4" : ""}
      -- Exactly the predicate of invocations_analytics_settled_idx, so the planner drops it from
      -- the per-row filter. A malformed amount is left out rather than failing the read on a cast.
      and settlement_status in ('settled', 'settled_upstream_failed')
      and (settlement ->> 'settled_amount') ~ '^[0-9]{1,78}$'
    group by 1, 2
  )
  select agg.agent_id, agg.bucket_start, agg.invocations::int8, agg.succeeded::int8, agg.failed::int8,
    ${roundedPcts("agg.pcts")}, agg.req_bytes::text, agg.resp_bytes::text, coalesce(paid.amount, 0)::text as settled_amount
  from agg left join paid on paid.bucket_start = agg.bucket_start and paid.agent_id = agg.agent_id
  order by agg.bucket_start, agg.agent_id`;
}

/** The tenant's totals over a window (one row, whatever the agents): see `summary`. */
const SUMMARY_SQL = `select invocations, succeeded, failed, ${roundedPcts("pcts")}
from (select count(*)::int8 as invocations,
  count(*) filter (where status = 'succeeded')::int8 as succeeded,
  count(*) filter (where status = 'failed')::int8 as failed,
  percentile_cont(array[0.5, 0.95, 0.99]) within group (order by latency_ms) as pcts
from invocations
where tenant_id = $1 and created_at >= $2 and created_at <= $3) totals`;

export type AnalyticsTotals = Pick<
  AnalyticsRow,
  "invocations" | "succeeded" | "failed" | "latencyMsP50" | "latencyMsP95" | "latencyMsP99"
>;

const DAY_MS = 86_400_000;
/**
 * A UTC day is rolled up (invocation_days, ADR 0007) once it ended this long ago: by then every
 * call created that day has ended and its settlement is final, but for calls that outlive it.
 */
export const ROLLUP_AFTER_MS = DAY_MS;

/** Rolls up, for one tenant, those of `days` not rolled up yet: one statement, idempotent. */
const ROLLUP_SQL = `with missing as (
  select d from unnest($2::text[]::timestamptz[]) as d
  where not exists (select 1 from invocation_days_done x where x.tenant_id = $1 and x.day = d)
), agg as (
  select ${DAY_OF_CREATED} as day, agent_id,
    ${AGGREGATES}
  from invocations
  where tenant_id = $1 and created_at >= $3 and created_at < $4
    and ${DAY_OF_CREATED} in (select d from missing)
  group by 1, 2
), paid as (
  select ${DAY_OF_CREATED} as day, agent_id, sum((settlement ->> 'settled_amount')::numeric) as amount
  from invocations
  where tenant_id = $1 and created_at >= $3 and created_at < $4
    and settlement_status in ('settled', 'settled_upstream_failed')
    and (settlement ->> 'settled_amount') ~ '^[0-9]{1,78}$'
    and ${DAY_OF_CREATED} in (select d from missing)
  group by 1, 2
), ins as (
  insert into invocation_days (tenant_id, day, agent_id, invocations, succeeded, failed, pcts, req_bytes,
    resp_bytes, settled_amount)
  select $1, agg.day, agg.agent_id, agg.invocations, agg.succeeded, agg.failed, agg.pcts, agg.req_bytes,
    agg.resp_bytes, coalesce(paid.amount, 0)
  from agg left join paid on paid.day = agg.day and paid.agent_id = agg.agent_id
  on conflict do nothing
)
insert into invocation_days_done (tenant_id, day) select $1, d from missing on conflict do nothing`;

/**
 * The rolled-up days of a read: they are consecutive, so a range of the primary key (a list of
 * days cast from text was cast again for every row of the tenant, ~4 ms for a month's 580 rows).
 */
const ROLLED_SQL = `select agent_id, day as bucket_start, invocations, succeeded, failed, ${roundedPcts("pcts")},
  req_bytes::text, resp_bytes::text, settled_amount::text
from invocation_days where tenant_id = $1 and day >= $2 and day < $3`;

/**
 * The settings of a bucket read, local to its transaction (ADR 0048). work_mem: the live rows are
 * sorted by (bucket, agent) for the exact percentiles, about 150 bytes a row in memory; 16 MB holds
 * some 100,000, the 72 hours a day read can have live at 1M invocations a month (the default 4 MB
 * spilled the live day's rows to disk). A read with more live rows spills as before. jit off: the
 * first plans of each statement on a connection cost more than jit_above_cost, and compiling them
 * took longer than running them. The embedded store has the same settings (it has no JIT).
 */
const READ_SETTINGS_SQL = "select set_config('work_mem', '16MB', true), set_config('jit', 'off', true)";

/** An inclusive upper bound just before `t`, at the database's microsecond resolution. */
const justBefore = (t: number) => new Date(t - 1).toISOString().replace("Z", "999Z");

/** Invocation aggregates. Every function takes the tenant id: there is no unscoped read. */
export const analyticsRepo = {
  /**
   * Per agent per UTC bucket over created_at ∈ [since, until]: counts, the continuous percentiles
   * of latency_ms (rows without a latency are left out of them), bytes each way, and the decimal
   * sum of settled amounts of settled rows. Only buckets with rows appear; ordered by bucket, then
   * agent. Day buckets of whole days that closed `ROLLUP_AFTER_MS` ago come from the rollup (made
   * by the first read that needs them, ADR 0007); the rest is computed from the invocations. One
   * transaction, with the settings that keep the live rows' sort in memory (READ_SETTINGS_SQL).
   */
  buckets(
    transact: Transact,
    tenantId: string,
    q: AnalyticsQuery,
    now = Date.now(),
  ): Promise<AnalyticsRow[]> {
    return transact(async (query) => {
      await query(READ_SETTINGS_SQL, []);
      return bucketsIn(query, tenantId, q, now);
    });
  },

  /** The buckets computed from the invocations themselves, over [since, until] or a part of it. */
  async live(
    query: Query,
    tenantId: string,
    q: AnalyticsQuery,
    part: { since?: string; until?: string } = {},
  ): Promise<AnalyticsRow[]> {
    const { text, params } = analyticsRepo.statement(tenantId, q);
    if (part.since) params[1] = part.since;
    if (part.until) params[2] = part.until;
    return mapRows(await query(text, params));
  },

  /**
   * The whole tenant over created_at ∈ [since, until], all agents together: counts and the
   * continuous latency percentiles of every call in the window (percentiles of agents or buckets
   * do not combine, so the overview's gateway-wide p95 is computed here, not added up).
   */
  async summary(query: Query, tenantId: string, q: { since: Date; until: Date }): Promise<AnalyticsTotals> {
    const [row] = await query(SUMMARY_SQL, [tenantId, q.since.toISOString(), q.until.toISOString()]);
    const p = (row?.pcts ?? null) as Array<number | string | null> | null;
    return {
      invocations: Number(row?.invocations ?? 0),
      succeeded: Number(row?.succeeded ?? 0),
      failed: Number(row?.failed ?? 0),
      latencyMsP50: pct(p, 0),
      latencyMsP95: pct(p, 1),
      latencyMsP99: pct(p, 2),
    };
  },

  /** The statement of the live computation over the whole window and its parameters. */
  statement(tenantId: string, q: AnalyticsQuery): { text: string; params: unknown[] } {
    const params: unknown[] = [tenantId, q.since.toISOString(), q.until.toISOString()];
    if (q.agentId !== undefined) params.push(q.agentId);
    return { text: statement(q.bucket, q.agentId !== undefined), params };
  },
};

/** `analyticsRepo.buckets` through `query`, in the transaction that has the read's settings. */
async function bucketsIn(
  query: Query,
  tenantId: string,
  q: AnalyticsQuery,
  now: number,
): Promise<AnalyticsRow[]> {
  const days: number[] = [];
  if (q.bucket === "day") {
    const since = q.since.getTime();
    const first = Math.ceil(since / DAY_MS) * DAY_MS;
    for (let d = first; d + DAY_MS <= q.until.getTime() && d + DAY_MS + ROLLUP_AFTER_MS <= now; d += DAY_MS)
      days.push(d);
  }
  if (days.length === 0) return analyticsRepo.live(query, tenantId, q);
  const iso = days.map((d) => new Date(d).toISOString());
  const from = days[0] as number;
  const to = (days.at(-1) as number) + DAY_MS;
  const range = [new Date(from).toISOString(), new Date(to).toISOString()];
  await query(ROLLUP_SQL, [tenantId, iso, ...range]);
  const byAgent = q.agentId !== undefined;
  const rolled = mapRows(
    await query(`${ROLLED_SQL}${byAgent ? " and agent_id = $4" : ""}`, [
      tenantId,
      ...range,
      ...(byAgent ? [q.agentId] : []),
    ]),
  );
  const before =
    q.since.getTime() < from ? await analyticsRepo.live(query, tenantId, q, { until: justBefore(from) }) : [];
  const after =
    to <= q.until.getTime()
      ? await analyticsRepo.live(query, tenantId, q, { since: new Date(to).toISOString() })
      : [];
  return [...before, ...rolled, ...after].sort(
    (a, b) => a.bucketStart.getTime() - b.bucketStart.getTime() || (a.agentId < b.agentId ? -1 : 1),
  );
}

function mapRows(rows: Array<Record<string, unknown>>): AnalyticsRow[] {
  return rows.map((r) => {
    const p = r.pcts as Array<number | string | null> | null;
    return {
      agentId: String(r.agent_id),
      bucketStart: new Date(r.bucket_start as string | Date),
      invocations: Number(r.invocations),
      succeeded: Number(r.succeeded),
      failed: Number(r.failed),
      latencyMsP50: pct(p, 0),
      latencyMsP95: pct(p, 1),
      latencyMsP99: pct(p, 2),
      reqBytes: Number(r.req_bytes),
      respBytes: Number(r.resp_bytes),
      settledAmount: String(r.settled_amount),
    };
  });
}

function pct(p: Array<number | string | null> | null, i: number): number | null {
  const x = p?.[i];
  return x === null || x === undefined ? null : Number(x);
}
