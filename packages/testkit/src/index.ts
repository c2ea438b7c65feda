export * from "./client.ts";
export * from "./deploy.ts";
export * from "./env.ts";
export * from "./mcp-upstream.ts";
export * from "./upstream.ts";
