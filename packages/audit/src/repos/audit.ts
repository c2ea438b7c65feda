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

/** Audit events. Every function takes the tenant id: there is no unscoped read. */
export const auditRepo = {
  /**
   * Appends one event to the tenant's chain inside `tx`, in one statement: `gw_audit_append`
   * (migration 0030, ADR 0053) takes the tenant's chain lock, reads the chain's head after the lock
   * was granted, and inserts the event with its position, `prev_digest` and `digest` computed in
   * SQL: `digest` is the sha256 of the head's digest followed by `canonical`, the event's canonical
   * JSON (`auditDigest` computes the same in process). The lock is transaction-scoped: it
   * serialises the tenant's chain writers until `tx` ends; two tenants never wait on each other
   * unless their hashes collide.
   */
  async append(
    tx: Db,
    row: Omit<AuditEventRow, "seq" | "prevDigest" | "digest">,
    canonical: string,
  ): Promise<{ seq: number; prevDigest: string | null; digest: string }> {
    const result = await tx.execute(sql`
      select seq, prev_digest, digest from gw_audit_append(${row.id}, ${row.tenantId}, ${row.actor},
        ${row.action}, ${row.resourceId}, ${row.requestId}, ${row.createdAt.toISOString()}::timestamptz,
        ${JSON.stringify(row.changes)}::jsonb, ${canonical})`);
    // postgres-js answers the rows; PGlite an object holding them.
    const rows = (Array.isArray(result) ? result : (result as { rows: unknown[] }).rows) as Array<{
      seq: number | string;
      prev_digest: string | null;
      digest: string;
    }>;
    const got = rows[0];
    if (got === undefined) throw new Error("audit event not inserted");
    return { seq: Number(got.seq), prevDigest: got.prev_digest, digest: got.digest };
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
