import { boundedWindow, isId, LIMITS, notFound } from "@gw/core";
import { type AnalyticsBucket, agentEventRepo, analyticsRepo, type Db, type Query } from "@gw/db";

export type AnalyticsCtx = { db: Db; query: Query; tenantId: string };
export const ANALYTICS_BUCKETS = ["hour", "day"] as const satisfies readonly AnalyticsBucket[];

/**
 * Invocation metrics per agent per UTC bucket over created_at ∈ [since, until] (defaults: the
 * last 24 hours by hour; at most LIMITS.analyticsMaxRangeDays). An agent filter naming no agent
 * of the tenant is a 404; a soft-deleted agent's history stays readable. See docs/activity.md.
 */
export async function getAnalytics({
  ctx,
  input,
}: {
  ctx: AnalyticsCtx;
  input: {
    since?: Date | undefined;
    until?: Date | undefined;
    bucket?: AnalyticsBucket | undefined;
    agentId?: string | undefined;
  };
}) {
  const { since, until } = boundedWindow(input, LIMITS.analyticsMaxRangeDays);
  if (input.agentId !== undefined) {
    const known =
      isId("agt", input.agentId) &&
      (await agentEventRepo.agentExists(ctx.db, ctx.tenantId, input.agentId, { live: false }));
    if (!known) throw notFound("agent");
  }
  const rows = await analyticsRepo.buckets(ctx.query, ctx.tenantId, {
    since,
    until,
    bucket: input.bucket ?? "hour",
    agentId: input.agentId,
  });
  return {
    data: rows.map((r) => ({
      agent_id: r.agentId,
      bucket_start: r.bucketStart.toISOString(),
      invocations: r.invocations,
      succeeded: r.succeeded,
      failed: r.failed,
      latency_ms_p50: r.latencyMsP50,
      latency_ms_p95: r.latencyMsP95,
      latency_ms_p99: r.latencyMsP99,
      req_bytes: r.reqBytes,
      resp_bytes: r.respBytes,
      settled_amount: r.settledAmount,
    })),
  };
}
