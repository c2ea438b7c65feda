import { boundedWindow, LIMITS } from "@gw/core";
import * as v from "valibot";
import { type AnalyticsCtx, INVOCATION_FIGURES } from "./analytics.ts";
import { analyticsRepo } from "./repos/analytics.ts";

/** The answer of GET /v1/analytics/summary; the OpenAPI document is generated from it. */
export const AnalyticsSummaryResponse = v.object({
  since: v.pipe(v.string(), v.isoTimestamp()),
  until: v.pipe(v.string(), v.isoTimestamp()),
  ...INVOCATION_FIGURES,
});
export type AnalyticsSummaryJson = v.InferOutput<typeof AnalyticsSummaryResponse>;

/**
 * The tenant's calls over created_at ∈ [since, until] (defaults: the last 24 hours; at most
 * LIMITS.analyticsMaxRangeDays), all agents together, with the latency percentiles of all of them:
 * the console's "last hour" at a glance. See docs/agent-events.md, Analytics.
 */
export async function getAnalyticsSummary({
  ctx,
  input,
}: {
  ctx: Omit<AnalyticsCtx, "transaction">;
  input: { since?: Date | undefined; until?: Date | undefined };
}): Promise<AnalyticsSummaryJson> {
  const { since, until } = boundedWindow(input, LIMITS.analyticsMaxRangeDays);
  const t = await analyticsRepo.summary(ctx.query, ctx.tenantId, { since, until });
  return {
    since: since.toISOString(),
    until: until.toISOString(),
    invocations: t.invocations,
    succeeded: t.succeeded,
    failed: t.failed,
    latency_ms_p50: t.latencyMsP50,
    latency_ms_p95: t.latencyMsP95,
    latency_ms_p99: t.latencyMsP99,
  };
}
