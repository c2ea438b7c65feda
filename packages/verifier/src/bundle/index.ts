export * from "./format.ts";
export * from "./keys.ts";
export * from "./mint.ts";
export * from "./verify.ts";
