import { isId, notFound } from "@gw/core";
import type { Db, InvocationRow, Query } from "@gw/db";
import { type InvocationFilter, invocationRepo } from "./repos/invocations.ts";
import { pollRow } from "./repos/poll.ts";

export type InvocationsCtx = { db: Db; tenantId: string };

export async function listInvocations({ ctx, filter }: { ctx: InvocationsCtx; filter: InvocationFilter }) {
  return invocationRepo.list(ctx.db, ctx.tenantId, filter);
}

export async function getInvocation({
  ctx,
  id,
}: {
  ctx: InvocationsCtx;
  id: string;
}): Promise<InvocationRow> {
  const row = isId("inv", id) ? await invocationRepo.get(ctx.db, ctx.tenantId, id) : undefined;
  if (!row) throw notFound("invocation");
  return row;
}

/**
 * An invocation through its agent's poll path (another agent's invocation is a 404 too), with its
 * kept answer once terminal: one prepared statement, no query builder (the poll is a hot path).
 */
export async function pollInvocation({
  query,
  tenantId,
  agentId,
  id,
}: {
  query: Query;
  tenantId: string;
  agentId: string;
  id: string;
}) {
  const found = isId("inv", id) ? await pollRow(query, tenantId, id) : undefined;
  if (!found || found.row.agentId !== agentId) throw notFound("invocation");
  return found;
}

/**
 * Who may read a polled answer's body: the caller (`sub`) that made the call, or a holder of
 * invocations:read_body. Another user of the tenant sees the status and headers only (the body
 * may carry that user's data). A row without a recorded caller shows its body to the scope only.
 */
export function canReadPolledBody(
  createdBy: string | null,
  caller: { userId: string; holdsReadBodyScope: boolean },
): boolean {
  return caller.holdsReadBodyScope || (createdBy !== null && createdBy === caller.userId);
}

/** Deletes polled results past their time (every tenant: a maintenance job). */
export function purgeExpiredResults(db: Db, now: Date): Promise<number> {
  return invocationRepo.purgeResults(db, now);
}
