export { AGENT_PROTOCOLS, type AgentProtocol } from "@gw/db";
export * from "./agents.ts";
export * from "./members.ts";
export { type AgentPatch, agentRepo, type NewAgent } from "./repos/agents.ts";
export * from "./schema.ts";
export * from "./serialize.ts";
