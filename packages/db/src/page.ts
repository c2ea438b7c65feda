import { count, getTableColumns, type SQL, sql } from "drizzle-orm";
import type { PgColumn, PgTable } from "drizzle-orm/pg-core";
import type { Db } from "./client.ts";

/**
 * The filtered total as a column of the page's own statement: `(select count(*) from t where …)`,
 * uncorrelated, so Postgres counts once and the page keeps its index scan with LIMIT (a
 * `count(*) over ()` window would read and sort every matching row first). Two statements (a page
 * and a count) read two snapshots, and a row landing between them made `total` disagree with `data`.
 */
export const totalOf = (table: PgTable, where: SQL | undefined): SQL<number> =>
  sql<number>`(select count(*) from ${table}${where ? sql` where ${where}` : sql``})`.mapWith(Number);

/**
 * A page read with `{ ...columns, total_: totalOf(table, where) }`, split into its rows and the
 * total. A page past the end has no row to carry the total: `count` reads it then.
 */
export async function withTotal<R extends { total_: number }>(
  rows: R[],
  offset: number,
  count: () => Promise<number>,
): Promise<{ rows: Array<Omit<R, "total_">>; total: number }> {
  const first = rows[0];
  if (first === undefined) return { rows: [], total: offset === 0 ? 0 : await count() };
  return { rows: rows.map(({ total_: _t, ...row }) => row), total: first.total_ };
}

/** What `readPage` reads: the filter, the order, the page, and the columns when not every one. */
export type PageQuery = {
  where: SQL | undefined;
  order: Array<PgColumn | SQL>;
  limit: number;
  offset: number;
  /** The selection, when a list leaves some columns out (bodies); every column of the table by default. */
  columns?: Record<string, PgColumn>;
};

/**
 * One page of a list and its filtered total, in one statement (`totalOf`, `withTotal`): the read
 * every tenant-scoped list route makes. `R` is the row type of the selection.
 */
export async function readPage<R>(
  db: Db,
  table: PgTable,
  q: PageQuery,
): Promise<{ rows: R[]; total: number }> {
  const page = await db
    .select({ ...(q.columns ?? getTableColumns(table)), total_: totalOf(table, q.where) })
    .from(table)
    .where(q.where)
    .orderBy(...q.order)
    .limit(q.limit)
    .offset(q.offset);
  const counted = async () => (await db.select({ n: count() }).from(table).where(q.where))[0]?.n ?? 0;
  return (await withTotal(page, q.offset, counted)) as { rows: R[]; total: number };
}
