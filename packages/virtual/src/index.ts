export * from "./cursor.ts";
export * from "./fanout.ts";
export * from "./listen.ts";
export * from "./members.ts";
export * from "./merge.ts";
export * from "./names.ts";
export * from "./plan.ts";
export * from "./protocol.ts";
