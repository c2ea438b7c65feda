export * from "./analytics.ts";
export {
  type AnalyticsBucket,
  type AnalyticsQuery,
  type AnalyticsRow,
  type AnalyticsTotals,
  analyticsRepo,
} from "./repos/analytics.ts";
export * from "./summary.ts";
