import { type AuditEventRow, auditEvents, type Db, readPage } from "@gw/db";
import { and, asc, desc, eq, gt, gte, lte, type SQL, sql } from "drizzle-orm";

export type AuditFilter = {
  since?: Date | undefined;
  until?: Date | undefined;
  action?: string | undefined;
  actor?: string | undefined;
  resourceId?: string | undefined;
  limit: number;
  offset: number;
};

/**
 * Advisory-lock class of the per-tenant chain lock (the two-key form, so its keys never meet the
 * migrator's single-key lock). The key inside the class is `hashtext(tenant_id)`.
 */
const CHAIN_LOCK_CLASS = 741_913;

/** Audit events. Every function takes the tenant id: there is no unscoped read. */
export const auditRepo = {
  /**
   * Serialises the tenant's chain writers until `tx` ends (a transaction-scoped advisory lock) and
   * reads the chain's head. Two tenants never wait on each other unless their hashes collide.
   */
  async lockHead(tx: Db, tenantId: string): Promise<{ seq: number; digest: string } | undefined> {
    await tx.execute(sql`select pg_advisory_xact_lock(${CHAIN_LOCK_CLASS}, hashtext(${tenantId}))`);
    const [head] = await tx
      .select({ seq: auditEvents.seq, digest: auditEvents.digest })
      .from(auditEvents)
      .where(eq(auditEvents.tenantId, tenantId))
      .orderBy(desc(auditEvents.seq))
      .limit(1);
    return head;
  },

  async insert(tx: Db, row: AuditEventRow): Promise<void> {
    await tx.insert(auditEvents).values(row);
  },

  /** Newest first (chain order), with the filtered total before paging. */
  async list(db: Db, tenantId: string, f: AuditFilter): Promise<{ rows: AuditEventRow[]; total: number }> {
    const where = and(
      ...([
        eq(auditEvents.tenantId, tenantId),
        f.since ? gte(auditEvents.createdAt, f.since) : undefined,
        f.until ? lte(auditEvents.createdAt, f.until) : undefined,
        f.action !== undefined ? eq(auditEvents.action, f.action) : undefined,
        f.actor !== undefined ? eq(auditEvents.actor, f.actor) : undefined,
        f.resourceId !== undefined ? eq(auditEvents.resourceId, f.resourceId) : undefined,
      ] as Array<SQL | undefined>),
    );
    const order = [desc(auditEvents.seq)];
    return readPage<AuditEventRow>(db, auditEvents, { where, order, limit: f.limit, offset: f.offset });
  },

  /**
   * One keyset page in chain order (oldest first) after `afterSeq`: the export and the verifier
   * walk the chain with these, never holding more than one page.
   */
  async pageAfter(
    db: Db,
    tenantId: string,
    afterSeq: number,
    size: number,
    range: { since?: Date | undefined; until?: Date | undefined } = {},
  ): Promise<AuditEventRow[]> {
    return db
      .select()
      .from(auditEvents)
      .where(
        and(
          ...([
            eq(auditEvents.tenantId, tenantId),
            gt(auditEvents.seq, afterSeq),
            range.since ? gte(auditEvents.createdAt, range.since) : undefined,
            range.until ? lte(auditEvents.createdAt, range.until) : undefined,
          ] as Array<SQL | undefined>),
        ),
      )
      .orderBy(asc(auditEvents.seq))
      .limit(size);
  },
};
