export * from "./record.ts";
export * from "./schema.ts";
export * from "./summary.ts";
