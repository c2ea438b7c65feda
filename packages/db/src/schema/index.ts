export * from "./agent-events.ts";
export * from "./agents.ts";
export * from "./credentials.ts";
export * from "./invocations.ts";
export * from "./policies.ts";
export * from "./receipts.ts";
export * from "./reservations.ts";
export * from "./settlement-configs.ts";
