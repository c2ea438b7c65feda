export * from "./processor.ts";
export * from "./worker.ts";
