export * from "./dispatcher.ts";
export * from "./ssrf.ts";
