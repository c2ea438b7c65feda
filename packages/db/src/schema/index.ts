export * from "./agent-events.ts";
export * from "./agents.ts";
export * from "./credentials.ts";
export * from "./invocations.ts";
export * from "./reliability.ts";
export * from "./reservations.ts";
export * from "./settlement-configs.ts";
