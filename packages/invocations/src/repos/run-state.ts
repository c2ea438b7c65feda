import type { InvocationStatus } from "@gw/db";
import { invocations } from "@gw/db";
import { and, eq, isNotNull, isNull, or, type SQL } from "drizzle-orm";

// A transactional call's claim and run progress live in columns no index reads (`started_at`,
// `attempts`), so the claim is a HOT update (ADR 0030): the `status` column of a claimed call
// stays `pending` until its terminal write. A row is running when it is `running` (a streaming
// row, or a claim written before this) or `pending` with `started_at` set.

/** The status a row reads as, in SQL (`t`: the table's alias with its dot). */
export const statusSql = (t = "") =>
  `case when ${t}status = 'pending' and ${t}started_at is not null then 'running' else ${t}status end`;

/** The status a row read from the store reads as. */
export const runStatus = (row: { status: InvocationStatus; startedAt: Date | null }): InvocationStatus =>
  row.status === "pending" && row.startedAt !== null ? "running" : row.status;

/** The list filter on the status a row reads as. */
export function statusIs(status: InvocationStatus): SQL | undefined {
  const pending = eq(invocations.status, "pending");
  if (status === "pending") return and(pending, isNull(invocations.startedAt));
  if (status === "running") {
    return or(eq(invocations.status, "running"), and(pending, isNotNull(invocations.startedAt)));
  }
  return eq(invocations.status, status);
}
