export * from "./a2a.ts";
export * from "./logger.ts";
export * from "./logs.ts";
export * from "./mcp.ts";
export * from "./metrics.ts";
export * from "./safe-error.ts";
export * from "./sdk.ts";
export * from "./tracing.ts";
