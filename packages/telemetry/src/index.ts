export * from "./logger.ts";
export * from "./metrics.ts";
export * from "./safe-error.ts";
export * from "./sdk.ts";
export * from "./tracing.ts";
