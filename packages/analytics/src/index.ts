export * from "./analytics.ts";
export {
  type AnalyticsBucket,
  type AnalyticsQuery,
  type AnalyticsRow,
  analyticsRepo,
} from "./repos/analytics.ts";
