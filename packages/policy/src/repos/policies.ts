import {
  type Db,
  type PolicyAction,
  type PolicyDecisionRow,
  type PolicyRow,
  policies,
  policyDecisions,
  type Query,
  readPage,
} from "@gw/db";
import { and, desc, eq, gte, isNotNull, lte, type SQL, sql } from "drizzle-orm";

export type NewPolicyDecision = Omit<PolicyDecisionRow, "tenantId" | "createdAt" | "receiptArtifactId">;

export type DecisionFilter = {
  action?: PolicyAction | undefined;
  agentId?: string | undefined;
  since?: Date | undefined;
  until?: Date | undefined;
  limit: number;
  offset: number;
};

// The parameter is declared text (`::text::json`): typed json, the driver would encode the string
// again once the statement is prepared.
const INSERT_DECISIONS_SQL = `insert into policy_decisions (id, tenant_id, agent_id, protocol, mcp_tool, action, matched_rule, reason)
select v.id, v.tenant_id, v.agent_id, v.protocol, v.mcp_tool, v.action, v.matched_rule, v.reason
from json_to_recordset($1::text::json) as v(id text, tenant_id text, agent_id text, protocol text, mcp_tool text, action text, matched_rule text, reason text)`;

/** Policy documents and decisions. Every function takes the tenant id: there is no unscoped read. */
export const policyRepo = {
  async get(db: Db, tenantId: string): Promise<PolicyRow | undefined> {
    const [row] = await db.select().from(policies).where(eq(policies.tenantId, tenantId)).limit(1);
    return row;
  },

  /** Replaces the tenant's document; the version goes up by one (1 for the first document). */
  async put(db: Db, tenantId: string, document: Record<string, unknown>): Promise<PolicyRow> {
    const [row] = await db
      .insert(policies)
      .values({ tenantId, version: 1, document })
      .onConflictDoUpdate({
        target: policies.tenantId,
        set: { version: sql`${policies.version} + 1`, document, updatedAt: sql`now()` },
      })
      .returning();
    if (!row) throw new Error("policy upsert returned no row");
    return row;
  },

  /**
   * Removes the tenant's document, keeping the row and its version so that the next `put` is
   * numbered above every earlier version. A tenant without a document is left as it is.
   */
  async clear(db: Db, tenantId: string): Promise<void> {
    await db
      .update(policies)
      .set({ document: null, updatedAt: sql`now()` })
      .where(and(eq(policies.tenantId, tenantId), isNotNull(policies.document)));
  },

  /**
   * Records decisions in one statement on the records pool (hot path). One constant statement text
   * for any batch size (prepared once per connection) over one JSON parameter, serialized by
   * `JSON.stringify` in one native pass, as the invocation writer does. Batches come from a
   * group-commit queue; a single decision is a batch of one.
   */
  async insertDecisions(query: Query, tenantDecisions: Array<{ tenantId: string; d: NewPolicyDecision }>) {
    const rows = tenantDecisions.map(({ tenantId, d }) => ({
      id: d.id,
      tenant_id: tenantId,
      agent_id: d.agentId,
      protocol: d.protocol,
      mcp_tool: d.mcpTool,
      action: d.action,
      matched_rule: d.matchedRule,
      reason: d.reason,
    }));
    await query(INSERT_DECISIONS_SQL, [JSON.stringify(rows)]);
  },

  async listDecisions(
    db: Db,
    tenantId: string,
    f: DecisionFilter,
  ): Promise<{ rows: PolicyDecisionRow[]; total: number }> {
    const conds: Array<SQL | undefined> = [
      eq(policyDecisions.tenantId, tenantId),
      f.action ? eq(policyDecisions.action, f.action) : undefined,
      f.agentId !== undefined ? eq(policyDecisions.agentId, f.agentId) : undefined,
      f.since ? gte(policyDecisions.createdAt, f.since) : undefined,
      f.until ? lte(policyDecisions.createdAt, f.until) : undefined,
    ];
    const where = and(...conds);
    const order = [desc(policyDecisions.createdAt), desc(policyDecisions.id)];
    return readPage<PolicyDecisionRow>(db, policyDecisions, {
      where,
      order,
      limit: f.limit,
      offset: f.offset,
    });
  },
};
