export * from "./analytics.ts";
