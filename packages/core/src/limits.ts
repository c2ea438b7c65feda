/**
 * Server-side limits: every cap a caller (or a tenant's own upstream: token endpoint, facilitator,
 * classifier) can hit. The handlers enforce these constants and /v1/capabilities reports the same
 * objects, so the two cannot drift; only the list page's default and the Retry-After bound, which
 * are not caps on what a caller sends, are not reported.
 */
export const MiB = 1024 * 1024;

/** A byte limit as messages and docs write it: "32 MiB", "256 KiB", else "300 bytes". */
export function bytesText(n: number): string {
  if (n >= MiB && n % MiB === 0) return `${n / MiB} MiB`;
  if (n >= 1024 && n % 1024 === 0) return `${n / 1024} KiB`;
  return `${n} bytes`;
}

export const LIMITS = Object.freeze({
  transactMaxBodyBytes: 32 * MiB,
  capturedBodyMaxBytes: 1 * MiB,
  modelHeaderMaxBytes: 256,
  bundleMaxBytes: 1 * MiB,
  invocationsMaxLimit: 100,
  policyDecisionsMaxLimit: 100,
  /** Largest page of `GET /v1/audit`. */
  auditMaxLimit: 100,
  analyticsMaxRangeDays: 31,
  agentEventMaxRangeDays: 31,
  agentEventMaxBytes: 32 * 1024,
  /** Control-plane JSON write bodies. */
  jsonBodyMaxBytes: 256 * 1024,
  listDefaultLimit: 20,
  retryAfterMaxSeconds: 60,
  /** An approval shows the tool arguments the caller sent up to this size (canonical JSON); null beyond. */
  approvalArgumentsMaxBytes: 64 * 1024,
  /**
   * A JSON-RPC request's method and name (MCP's method and tools/call name; A2A's method and ids):
   * they land in invocation rows, like the model header. Named for no one protocol: it bounds both.
   */
  nameMaxBytes: 256,
  /** A tools/list answer the gateway reads (learning, filtering, refresh); a larger one is not learned from. */
  toolListMaxBytes: 8 * MiB,
  /** A tool name the catalog keeps (MCP names a tool in at most 128 characters). */
  toolNameMaxBytes: 256,
  /** Per-tool prices of one MCP agent. */
  toolPricesMax: 256,
  /** Members of a virtual MCP server. */
  virtualMembersMax: 16,
  /** A member's answer a virtual MCP server reads whole to merge. */
  virtualMemberAnswerMaxBytes: 8 * MiB,
  /** A credential's secret, and an access token from a tenant's token endpoint (each sent as one header value). */
  credentialSecretMaxBytes: 8 * 1024,
  /** The x402 payment header, in characters (an EOA payment encodes to well under 2 KiB). */
  paymentHeaderMaxChars: 8 * 1024,
  /** The answer of a tenant's OAuth token endpoint. */
  oauthTokenResponseMaxBytes: 64 * 1024,
  /** The answer of a tenant's facilitator to a settlement. */
  facilitatorAnswerMaxBytes: 64 * 1024,
  /** The answer of a tenant's policy classifier. */
  classifierAnswerMaxBytes: 16 * 1024,
});
