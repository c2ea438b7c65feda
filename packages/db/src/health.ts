import type { Store } from "./client.ts";

/**
 * Server settings an operator should hear about at start-up. Today one: with `autovacuum` off,
 * nothing clears the row versions the invocation lifecycle leaves (three per transactional call),
 * and every read of `invocations` slows down as they pile up (docs/operations.md).
 */
export async function storeWarnings(store: Pick<Store, "kind" | "query">): Promise<string[]> {
  if (store.kind !== "postgres") return [];
  const [row] = await store.query("select current_setting('autovacuum') as autovacuum", []);
  return row?.autovacuum === "off"
    ? [
        "Postgres runs with autovacuum off: invocation rows leave dead versions that nothing clears; turn it on or vacuum the invocation tables on a schedule",
      ]
    : [];
}
