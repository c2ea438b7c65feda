export * from "./client.ts";
export * from "./deploy.ts";
export * from "./env.ts";
export * from "./facilitator.ts";
export * from "./mcp-upstream.ts";
export * from "./security.ts";
export * from "./upstream.ts";
export * from "./x402.ts";
