export * from "./outcome.ts";
export * from "./processor.ts";
export * from "./worker.ts";
