import { agentRepo } from "@gw/agents";
import { boundedWindow, isId, LIMITS, notFound } from "@gw/core";
import type { Db, Query, Transact } from "@gw/db";
import * as v from "valibot";
import { type AnalyticsBucket, analyticsRepo } from "./repos/analytics.ts";

export type AnalyticsCtx = { db: Db; query: Query; transaction: Transact; tenantId: string };
export const ANALYTICS_BUCKETS = ["hour", "day"] as const satisfies readonly AnalyticsBucket[];

const Count = v.pipe(v.number(), v.integer(), v.minValue(0));
const Latency = v.nullable(v.number());

/** The figures of a set of invocations, as a bucket and the summary both answer them. */
export const INVOCATION_FIGURES = {
  invocations: Count,
  succeeded: Count,
  failed: Count,
  latency_ms_p50: Latency,
  latency_ms_p95: Latency,
  latency_ms_p99: Latency,
};

/** The answer of GET /v1/analytics; the OpenAPI document is generated from it. */
export const AnalyticsResponse = v.object({
  data: v.array(
    v.object({
      agent_id: v.string(),
      bucket_start: v.pipe(v.string(), v.isoTimestamp()),
      ...INVOCATION_FIGURES,
      req_bytes: Count,
      resp_bytes: Count,
      settled_amount: v.pipe(v.string(), v.regex(/^[0-9]+(\.[0-9]+)?$/)),
    }),
  ),
});
export type AnalyticsJson = v.InferOutput<typeof AnalyticsResponse>;

/**
 * Invocation metrics per agent per UTC bucket over created_at ∈ [since, until] (defaults: the
 * last 24 hours by hour; at most LIMITS.analyticsMaxRangeDays). An agent filter naming no agent
 * of the tenant is a 404; a soft-deleted agent's history stays readable. See docs/agent-events.md.
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
}): Promise<AnalyticsJson> {
  const { since, until } = boundedWindow(input, LIMITS.analyticsMaxRangeDays);
  if (input.agentId !== undefined) {
    const known =
      isId("agt", input.agentId) &&
      (await agentRepo.exists(ctx.db, ctx.tenantId, input.agentId, { live: false }));
    if (!known) throw notFound("agent");
  }
  const rows = await analyticsRepo.buckets(ctx.transaction, ctx.tenantId, {
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
