export * from "./invocations.ts";
export * from "./serialize.ts";
