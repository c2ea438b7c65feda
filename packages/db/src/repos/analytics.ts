import { and, eq, gte, lte, sql } from "drizzle-orm";
import type { Db } from "../client.ts";
import { invocations } from "../schema/index.ts";

export type AnalyticsBucket = "hour" | "day";

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

// The bucket unit is spliced into the SQL text (never a parameter) so the select list and the
// GROUP BY hold the same expression, and each unit gets its own prepared plan.
const UNIT: Record<AnalyticsBucket, string> = { hour: "'hour'", day: "'day'" };

/** Invocation aggregates. Every function takes the tenant id: there is no unscoped read. */
export const analyticsRepo = {
  /**
   * Per agent per UTC bucket over created_at ∈ [since, until], in one statement: counts, the
   * continuous percentiles of latency_ms (rows without a latency are left out of them), bytes
   * each way, and the decimal sum of settled amounts of settled rows. Only buckets with rows
   * appear; ordered by bucket, then agent.
   */
  async buckets(
    db: Db,
    tenantId: string,
    q: { since: Date; until: Date; bucket: AnalyticsBucket; agentId?: string | undefined },
  ): Promise<AnalyticsRow[]> {
    const bucketStart = sql`date_trunc(${sql.raw(UNIT[q.bucket])}, ${invocations.createdAt}, 'UTC')`;
    const settledAmount = sql`${invocations.settlement} ->> 'settled_amount'`;
    const pcts = sql<Array<
      number | null
    > | null>`percentile_cont(array[0.5, 0.95, 0.99]) within group (order by ${invocations.latencyMs})`;
    const rows = await db
      .select({
        agentId: invocations.agentId,
        bucketStart: sql<Date>`${bucketStart}`.mapWith(invocations.createdAt),
        invocations: sql<number>`count(*)`.mapWith(Number),
        succeeded: sql<number>`count(*) filter (where ${invocations.status} = 'succeeded')`.mapWith(Number),
        failed: sql<number>`count(*) filter (where ${invocations.status} = 'failed')`.mapWith(Number),
        pcts,
        reqBytes: sql<number>`coalesce(sum(${invocations.reqSize}), 0)`.mapWith(Number),
        respBytes: sql<number>`coalesce(sum(${invocations.respSize}), 0)`.mapWith(Number),
        // A malformed amount is skipped rather than failing the whole read with a cast error.
        settledAmount: sql<string>`coalesce(sum((${settledAmount})::numeric) filter (where ${invocations.settlementStatus} in ('settled', 'settled_upstream_failed') and ${settledAmount} ~ '^[0-9]{1,78}$'), 0)::text`,
      })
      .from(invocations)
      .where(
        and(
          eq(invocations.tenantId, tenantId),
          gte(invocations.createdAt, q.since),
          lte(invocations.createdAt, q.until),
          q.agentId !== undefined ? eq(invocations.agentId, q.agentId) : undefined,
        ),
      )
      .groupBy(invocations.agentId, bucketStart)
      .orderBy(bucketStart, invocations.agentId);
    return rows.map(({ pcts: p, ...r }) => ({
      ...r,
      latencyMsP50: pct(p, 0),
      latencyMsP95: pct(p, 1),
      latencyMsP99: pct(p, 2),
    }));
  },
};

/** postgres-js parses float8[] into numbers; PGlite too. A null array means no latencies. */
function pct(p: Array<number | null> | null, i: number): number | null {
  const x = p?.[i];
  return x === null || x === undefined ? null : Number(x);
}
