import type { AuditEventRow, Db, Query } from "@gw/db";
import { type SQL, sql } from "drizzle-orm";
import { type AuditAction, type AuditChanges, appendAudit } from "./audit.ts";

/** Records one event of the write in progress, in its transaction. */
export type Audit = (action: AuditAction, resourceId: string, changes: AuditChanges) => Promise<void>;

/**
 * Runs a write and its audit events in one transaction: they commit together or not at all.
 * `fn` gets the transaction (to hand the write's verb as its `db`) and `audit`. Answers the
 * write's result and the events committed with it.
 */
export async function auditedTransaction<T>(
  db: Db,
  who: { tenantId: string; actor: string; requestId: string },
  fn: (tx: Db, audit: Audit) => Promise<T>,
): Promise<{ result: T; events: AuditEventRow[] }> {
  const events: AuditEventRow[] = [];
  const result = await db.transaction(async (tx) =>
    fn(tx, async (action, resourceId, changes) => {
      events.push(await appendAudit({ tx, ...who, action, resourceId, changes }));
    }),
  );
  return { result, events };
}

/**
 * The raw-SQL executor (`Query`) of a transaction, for verbs written against `Store.query`: the
 * statement's `$n` placeholders become bound parameters on the transaction's own connection.
 */
export function queryOf(tx: Db): Query {
  return async (text, params) => {
    const parts = text.split(/\$(\d+)/);
    const chunks: SQL[] = [];
    for (let i = 0; i < parts.length; i++) {
      chunks.push(i % 2 === 0 ? sql.raw(parts[i] as string) : sql`${params[Number(parts[i]) - 1]}`);
    }
    const result = (await tx.execute(sql.join(chunks))) as unknown;
    // postgres-js answers the rows; PGlite an object holding them.
    const rows = Array.isArray(result) ? result : (result as { rows: unknown[] }).rows;
    return rows as Array<Record<string, unknown>>;
  };
}
