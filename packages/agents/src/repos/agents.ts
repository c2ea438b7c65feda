import { type AgentProtocol, type AgentRow, agents, type Db, readPage } from "@gw/db";
import { and, count, desc, eq, isNull } from "drizzle-orm";

export type NewAgent = Omit<typeof agents.$inferInsert, "tenantId" | "createdAt" | "updatedAt" | "deletedAt">;
export type AgentPatch = Partial<Omit<NewAgent, "id" | "createdBy">>;

const live = (tenantId: string, id: string) =>
  and(eq(agents.tenantId, tenantId), eq(agents.id, id), isNull(agents.deletedAt));

/** Agent queries. Every function takes the tenant id: there is no unscoped read. */
export const agentRepo = {
  async insert(db: Db, tenantId: string, row: NewAgent): Promise<AgentRow> {
    const [created] = await db
      .insert(agents)
      .values({ ...row, tenantId })
      .returning();
    if (!created) throw new Error("insert returned no row");
    return created;
  },

  /** The agent's `emit_receipts` (deleted agents included: their calls still get receipts). */
  async emitReceipts(db: Db, tenantId: string, id: string): Promise<boolean | null | undefined> {
    const [row] = await db
      .select({ v: agents.emitReceipts })
      .from(agents)
      .where(and(eq(agents.tenantId, tenantId), eq(agents.id, id)))
      .limit(1);
    return row?.v;
  },

  /**
   * Whether the tenant has this agent. `live` excludes soft-deleted agents (writes need a live
   * agent; reads of history accept a deleted one).
   */
  async exists(db: Db, tenantId: string, agentId: string, opts: { live: boolean }): Promise<boolean> {
    const rows = await db
      .select({ id: agents.id })
      .from(agents)
      .where(
        and(
          eq(agents.tenantId, tenantId),
          eq(agents.id, agentId),
          opts.live ? isNull(agents.deletedAt) : undefined,
        ),
      )
      .limit(1);
    return rows.length > 0;
  },

  async get(db: Db, tenantId: string, id: string): Promise<AgentRow | undefined> {
    const [row] = await db.select().from(agents).where(live(tenantId, id)).limit(1);
    return row;
  },

  async list(
    db: Db,
    tenantId: string,
    q: { protocol?: AgentProtocol | undefined; limit: number; offset: number },
  ): Promise<{ rows: AgentRow[]; total: number }> {
    const where = and(
      eq(agents.tenantId, tenantId),
      isNull(agents.deletedAt),
      q.protocol ? eq(agents.protocol, q.protocol) : undefined,
    );
    const order = [desc(agents.createdAt), desc(agents.id)];
    return readPage<AgentRow>(db, agents, { where, order, limit: q.limit, offset: q.offset });
  },

  async update(db: Db, tenantId: string, id: string, patch: AgentPatch): Promise<AgentRow | undefined> {
    const [row] = await db
      .update(agents)
      .set({ ...patch, updatedAt: new Date() })
      .where(live(tenantId, id))
      .returning();
    return row;
  },

  /** Soft delete: status becomes inactive and the row leaves the catalog. */
  async softDelete(db: Db, tenantId: string, id: string): Promise<boolean> {
    const rows = await db
      .update(agents)
      .set({ status: "inactive", deletedAt: new Date(), updatedAt: new Date() })
      .where(live(tenantId, id))
      .returning({ id: agents.id });
    return rows.length > 0;
  },

  async countReferencing(db: Db, tenantId: string, credentialId: string): Promise<number> {
    const [r] = await db
      .select({ n: count() })
      .from(agents)
      .where(
        and(eq(agents.tenantId, tenantId), eq(agents.credentialRef, credentialId), isNull(agents.deletedAt)),
      );
    return r?.n ?? 0;
  },
};
