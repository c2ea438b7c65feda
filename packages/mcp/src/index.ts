export * from "./collect.ts";
export * from "./parse.ts";
export * from "./sse.ts";
