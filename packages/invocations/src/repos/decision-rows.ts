/**
 * A policy decision written with the invocation it belongs to (docs/policy.md "Decisions"): in the
 * statement that inserts the invocation's row, so both commit together or not at all.
 */
export type DecisionRecord = {
  id: string;
  agentId: string;
  protocol: string;
  mcpTool: string | null;
  action: string;
  matchedRule: string;
  reason: string;
  /** When the call was decided (a record written after the fact must not lose it). */
  at: Date;
  /** Runs once the decision committed (with its invocation); its errors are ignored. */
  recorded?: (() => void) | undefined;
};

/**
 * The policy decisions of a batch of invocation inserts ($2 of `insertSql`), inserted by a
 * data-modifying CTE of the same statement: a decision commits with its invocation or not at all.
 */
export const DECISIONS_CTE = `d as (
  insert into policy_decisions (id, tenant_id, agent_id, protocol, mcp_tool, action, matched_rule, reason, created_at)
  select d.id, d.tenant_id, d.agent_id, d.protocol, d.mcp_tool, d.action, d.matched_rule, d.reason,
    'epoch'::timestamptz + d.at * interval '1 millisecond'
  from json_to_recordset($2::text::json) as d(id text, tenant_id text, agent_id text, protocol text, mcp_tool text, action text, matched_rule text, reason text, at int8)
  returning 1
)`;

/** The JSON of `DECISIONS_CTE` for a batch: "[]" when no row of it carries a decision. */
export function decisionsParam(
  items: ReadonlyArray<{ tenantId: string; decision?: DecisionRecord | undefined }>,
): string {
  const decisions: object[] = [];
  for (const { tenantId, decision: d } of items) {
    if (!d) continue;
    decisions.push({
      id: d.id,
      tenant_id: tenantId,
      agent_id: d.agentId,
      protocol: d.protocol,
      mcp_tool: d.mcpTool ?? undefined,
      action: d.action,
      matched_rule: d.matchedRule,
      reason: d.reason,
      at: d.at.getTime(),
    });
  }
  return decisions.length === 0 ? "[]" : JSON.stringify(decisions);
}
