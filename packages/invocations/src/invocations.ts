import { isId, notFound } from "@gw/core";
import { type Db, type InvocationFilter, type InvocationRow, invocationRepo } from "@gw/db";

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

/** An invocation through its agent's poll path: another agent's invocation is a 404 too. */
export async function pollInvocation({
  ctx,
  agentId,
  id,
}: {
  ctx: InvocationsCtx;
  agentId: string;
  id: string;
}) {
  const row = await getInvocation({ ctx, id });
  if (row.agentId !== agentId) throw notFound("invocation");
  const terminal = row.status === "succeeded" || row.status === "failed";
  const result = terminal ? await invocationRepo.result(ctx.db, ctx.tenantId, id) : undefined;
  return { row, result };
}

/** Deletes polled results past their time (every tenant: a maintenance job). */
export function purgeExpiredResults(db: Db, now: Date): Promise<number> {
  return invocationRepo.purgeResults(db, now);
}
