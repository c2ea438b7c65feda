export * from "./collect.ts";
export * from "./envelope.ts";
export * from "./guards.ts";
export * from "./json-spans.ts";
export * from "./lines.ts";
export * from "./sse.ts";
export * from "./sse-split.ts";
