export * from "./bullmq.ts";
export * from "./consumer.ts";
export * from "./jobs.ts";
export * from "./memory.ts";
export * from "./trace.ts";
