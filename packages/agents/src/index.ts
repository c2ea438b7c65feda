export * from "./agents.ts";
export * from "./members.ts";
export * from "./schema.ts";
export * from "./serialize.ts";
