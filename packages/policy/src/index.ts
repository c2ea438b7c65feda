export * from "./cache.ts";
export * from "./classifier.ts";
export * from "./compile.ts";
export * from "./decisions.ts";
export * from "./evaluate.ts";
export * from "./policy.ts";
export * from "./schema.ts";
export * from "./serialize.ts";
