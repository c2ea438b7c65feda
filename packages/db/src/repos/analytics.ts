import type { Query } from "../client.ts";

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

// UTC buckets through date_bin, which (unlike date_trunc with a zone) is immutable, so the day
// bucket can be an index column: invocations_analytics_idx (migration 0005) holds every column
// the aggregate reads, in group order, so a month of rows is an index-only scan with no sort.
const ORIGIN = "timestamptz '2000-01-01 00:00:00+00'";
const bin = (unit: string, col: string) => `date_bin(interval '1 ${unit}', ${col}, ${ORIGIN})`;
const DAY_OF_CREATED = `date_bin('1 day'::interval, created_at, '2000-01-01 00:00:00+00'::timestamptz)`;

/**
 * One statement per bucket unit and filter shape, constant text, so postgres-js prepares each
 * once. The redundant day-bucket bounds let the planner range-scan the expression index.
 * Settled amounts come from their own partial index (few rows are settled), joined per group.
 */
function statement(bucket: AnalyticsBucket, byAgent: boolean): string {
  const where = `tenant_id = $1 and created_at >= $2 and created_at <= $3
      and ${DAY_OF_CREATED} >= ${bin("day", "$2::timestamptz")}
      and ${DAY_OF_CREATED} <= ${bin("day", "$3::timestamptz")}${byAgent ? " and agent_id = $4" : ""}`;
  const b = bucket === "day" ? DAY_OF_CREATED : bin("hour", "created_at");
  return `with agg as (
    select ${b} as bucket_start, agent_id,
      count(*) as invocations,
      count(*) filter (where status = 'succeeded') as succeeded,
      count(*) filter (where status = 'failed') as failed,
      percentile_cont(array[0.5, 0.95, 0.99]) within group (order by latency_ms) as pcts,
      coalesce(sum(req_size), 0) as req_bytes,
      coalesce(sum(resp_size), 0) as resp_bytes
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
    agg.pcts, agg.req_bytes::text, agg.resp_bytes::text, coalesce(paid.amount, 0)::text as settled_amount
  from agg left join paid on paid.bucket_start = agg.bucket_start and paid.agent_id = agg.agent_id
  order by agg.bucket_start, agg.agent_id`;
}

/** Invocation aggregates. Every function takes the tenant id: there is no unscoped read. */
export const analyticsRepo = {
  /**
   * Per agent per UTC bucket over created_at ∈ [since, until], in one statement: counts, the
   * continuous percentiles of latency_ms (rows without a latency are left out of them), bytes
   * each way, and the decimal sum of settled amounts of settled rows. Only buckets with rows
   * appear; ordered by bucket, then agent.
   */
  async buckets(query: Query, tenantId: string, q: AnalyticsQuery): Promise<AnalyticsRow[]> {
    const { text, params } = analyticsRepo.statement(tenantId, q);
    const rows = await query(text, params);
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
  },

  /** The statement `buckets` runs and its parameters (the bench prints its plan). */
  statement(tenantId: string, q: AnalyticsQuery): { text: string; params: unknown[] } {
    const params: unknown[] = [tenantId, q.since.toISOString(), q.until.toISOString()];
    if (q.agentId !== undefined) params.push(q.agentId);
    return { text: statement(q.bucket, q.agentId !== undefined), params };
  },
};

function pct(p: Array<number | string | null> | null, i: number): number | null {
  const x = p?.[i];
  return x === null || x === undefined ? null : Number(x);
}
