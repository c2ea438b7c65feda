import { and, count, desc, eq, gte, isNotNull, lte, type SQL, sql } from "drizzle-orm";
import type { Db, Query } from "../client.ts";
import {
  type PolicyAction,
  type PolicyDecisionRow,
  type PolicyRow,
  policies,
  policyDecisions,
} from "../schema/index.ts";

export type NewPolicyDecision = Omit<PolicyDecisionRow, "tenantId" | "createdAt" | "receiptArtifactId">;

export type DecisionFilter = {
  action?: PolicyAction | undefined;
  agentId?: string | undefined;
  since?: Date | undefined;
  until?: Date | undefined;
  limit: number;
  offset: number;
};

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
   * Records decisions in one statement on the records pool (hot path: raw SQL, prepared once).
   * Batches come from a group-commit queue; a single decision is a batch of one.
   */
  async insertDecisions(query: Query, tenantDecisions: Array<{ tenantId: string; d: NewPolicyDecision }>) {
    const params: unknown[] = [];
    const values: string[] = [];
    for (const { tenantId, d } of tenantDecisions) {
      const i = params.length;
      params.push(d.id, tenantId, d.agentId, d.protocol, d.mcpTool, d.action, d.matchedRule, d.reason);
      values.push(`($${i + 1},$${i + 2},$${i + 3},$${i + 4},$${i + 5},$${i + 6},$${i + 7},$${i + 8})`);
    }
    await query(
      `insert into policy_decisions (id, tenant_id, agent_id, protocol, mcp_tool, action, matched_rule, reason) values ${values.join(",")}`,
      params,
    );
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
    const [rows, totals] = await Promise.all([
      db
        .select()
        .from(policyDecisions)
        .where(where)
        .orderBy(desc(policyDecisions.createdAt), desc(policyDecisions.id))
        .limit(f.limit)
        .offset(f.offset),
      db.select({ n: count() }).from(policyDecisions).where(where),
    ]);
    return { rows, total: totals[0]?.n ?? 0 };
  },
};
