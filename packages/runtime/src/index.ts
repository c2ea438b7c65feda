export * from "./boot.ts";
export * from "./changes.ts";
export * from "./features.ts";
export * from "./health.ts";
export * from "./processes.ts";
export * from "./runtime.ts";
