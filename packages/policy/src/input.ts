import type { AgentProtocol } from "@gw/db";

/**
 * What a call looks like to the policy: metadata only, never the body or the caller's token. A file of
 * its own because both the matcher (compile.ts) and the CEL variables (cel/variables.ts) read it.
 */
export type PolicyInput = {
  tenantId: string;
  agentId: string;
  protocol: AgentProtocol;
  /**
   * The JSON-RPC method: MCP's, or an A2A call's (`SendMessage`, v0.3 `message/send`, ...); named
   * for no one protocol. The tool (`mcpTool`) is MCP's alone.
   */
  rpcMethod: string | null;
  mcpTool: string | null;
  model: string | null;
  /** Bytes of the request body; null when unknown (a streamed body without Content-Length). */
  bodySize: number | null;
  /** What `when` conditions see of the call beyond the metadata (cel/variables.ts). */
  principal: { sub: string; scopes: readonly string[]; claims: Readonly<Record<string, unknown>> };
  agentName: string;
  mode: "streaming" | "transactional";
  /** `params.arguments` of a parsed tools/call, the `params` of an A2A request; undefined for anything else. */
  arguments: unknown;
  /**
   * The called tool's catalog status and digest (docs/tools.md), filled by the gate for a
   * tools/call when the policy names `tool_status` or a `when` reads `tool.`; absent otherwise.
   */
  toolStatus?: string | null;
  toolDigest?: string | null;
  /** What the call costs (docs/payments.md), in x402 v2 forms; null or absent when it is free. */
  price?: { amount: string; asset: string; network: string } | null;
};
