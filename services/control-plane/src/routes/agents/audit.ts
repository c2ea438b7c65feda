import { type AgentRow, agentJson } from "@gw/agents";
import { type AuditChanges, diffChanges } from "@gw/audit";

/** An agent's changed fields (members included) as callers see them; timestamps left out. */
export function agentChanges(before: AgentRow | null, after: AgentRow | null): AuditChanges {
  const view = (row: AgentRow | null) => {
    if (!row) return null;
    const { created_at: _c, updated_at: _u, ...fields } = agentJson(row, { receiptsEnabled: false });
    // emit_receipts as stored: null means "the deployment's default", not a value of its own.
    return { ...fields, emit_receipts: row.emitReceipts };
  };
  return diffChanges(view(before), view(after));
}
