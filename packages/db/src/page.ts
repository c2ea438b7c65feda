import { type SQL, sql } from "drizzle-orm";
import type { PgTable } from "drizzle-orm/pg-core";

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
