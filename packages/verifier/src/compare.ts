import { canonicalJson } from "./json/canonical.ts";
import type { VerifierOutput } from "./output.ts";
import { AGENT_CONSTRAINT, TENANT_CONSTRAINT } from "./schemas.ts";

/** What the gateway is about to forward, and for whom. */
export type ActualCall = {
  tool: string;
  arguments: Record<string, unknown>;
  /** The OAuth subject of the caller's token. */
  sub: string;
  tenantId: string;
  agentId: string;
};

export type Mismatch = "tool" | "arguments" | "principal" | "tenant" | "agent";

/**
 * Compares the verified request with the call: the tool by exact name, the arguments by RFC 8785
 * canonical form (member order and number spelling do not matter, values do), the mission's
 * principal with the token subject, and the string constraints `gateway.tenant_id` /
 * `gateway.agent_id` with the tenant and the route's agent. Returns the first mismatch, or null.
 */
export function compareVerifiedAction(verified: VerifierOutput, actual: ActualCall): Mismatch | null {
  if (verified.request.tool !== actual.tool) return "tool";
  if (canonicalJson(verified.request.arguments) !== canonicalJson(actual.arguments)) return "arguments";
  if (verified.mission.principal !== actual.sub) return "principal";
  const { constraints } = verified.mission;
  if (constraints[TENANT_CONSTRAINT] !== actual.tenantId) return "tenant";
  if (constraints[AGENT_CONSTRAINT] !== actual.agentId) return "agent";
  return null;
}
