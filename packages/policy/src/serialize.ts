import type { PolicyDecisionRow, PolicyRow } from "@gw/db";

/** GET /v1/policy: `{version: 0, rules: []}` when the tenant has no document. */
export function policyJson(row: PolicyRow | undefined) {
  if (!row) return { version: 0, rules: [] };
  const doc = row.document as { default?: unknown; on_error?: unknown; rules?: unknown };
  return {
    version: row.version,
    default: doc.default,
    on_error: doc.on_error,
    rules: doc.rules ?? [],
    updated_at: row.updatedAt.toISOString(),
  };
}

/** A decision list item (DESIGN.md §3 "Policy"). */
export function decisionJson(row: PolicyDecisionRow) {
  return {
    id: row.id,
    agent_id: row.agentId,
    protocol: row.protocol,
    mcp_tool: row.mcpTool,
    action: row.action,
    matched_rule: row.matchedRule,
    reason: row.reason,
    receipt_artifact_id: row.receiptArtifactId,
    created_at: row.createdAt.toISOString(),
  };
}
