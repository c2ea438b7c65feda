export * from "./call.ts";
export * from "./cancel.ts";
export * from "./classify.ts";
export * from "./dispatcher.ts";
export * from "./headers.ts";
export * from "./hosts.ts";
export * from "./open.ts";
export * from "./ssrf.ts";
