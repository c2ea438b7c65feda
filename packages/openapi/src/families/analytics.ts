import { ANALYTICS_BUCKETS, AnalyticsResponse, AnalyticsSummaryResponse } from "@gw/analytics";
import { LIMITS } from "@gw/core";
import * as v from "valibot";
import { enumQuery, error, ok, timeQuery } from "../common.ts";
import type { Route } from "../route.ts";

export const analyticsRoutes: Route[] = [
  {
    method: "get",
    path: "/v1/analytics",
    operationId: "getAnalytics",
    summary: "Invocation metrics per agent per time bucket",
    description: `UTC buckets over created_at; default the last 24 hours by hour, at most ${LIMITS.analyticsMaxRangeDays} days.`,
    tags: ["Analytics"],
    params: [
      timeQuery("since", "Start of the window."),
      timeQuery("until", "End of the window."),
      enumQuery("bucket", ANALYTICS_BUCKETS, "Bucket width; default hour."),
      { name: "agent_id", in: "query", description: "Only this agent.", schema: v.string() },
    ],
    responses: {
      "200": ok("One row per agent and bucket with traffic.", AnalyticsResponse),
      "400": error("Invalid since, until or bucket, or a window too long or reversed."),
      "404": error("agent_id names no agent of the caller's tenant."),
    },
  },
  {
    method: "get",
    path: "/v1/analytics/summary",
    operationId: "getAnalyticsSummary",
    summary: "The tenant's calls over a window, all agents together",
    description: `Counts and latency percentiles of every call created in the window (default the last 24 hours, at most ${LIMITS.analyticsMaxRangeDays} days), whatever the agent: the console's overview. Percentiles are computed over the calls themselves, never combined from per-agent rows.`,
    tags: ["Analytics"],
    params: [timeQuery("since", "Start of the window."), timeQuery("until", "End of the window.")],
    responses: {
      "200": ok("The window's totals.", AnalyticsSummaryResponse),
      "400": error("Invalid since or until, or a window too long or reversed."),
    },
  },
];

export const analyticsComponents = {
  Analytics: AnalyticsResponse,
  AnalyticsSummary: AnalyticsSummaryResponse,
} satisfies Record<string, v.GenericSchema>;
