import {
  type Db,
  type InvocationMode,
  type InvocationRow,
  type InvocationStatus,
  invocationResults,
  invocations,
  RECORDED_FILTERS,
  type RecordedParam,
  readPage,
} from "@gw/db";
import { and, asc, desc, eq, getTableColumns, gte, lt, lte, or, type SQL } from "drizzle-orm";
import { runStatus, statusIs } from "./run-state.ts";

export type NewInvocation = Omit<typeof invocations.$inferInsert, "tenantId">;
export type InvocationUpdate = Partial<
  Omit<typeof invocations.$inferInsert, "id" | "tenantId" | "agentId" | "mode">
>;
export type InvocationResult = {
  status: number;
  contentType: string | null;
  /** Further response headers kept for the poll (MCP session and protocol version). */
  headers: Record<string, string> | null;
  body: Buffer;
  expiresAt: Date;
};

export type InvocationFilter = {
  status?: InvocationStatus | undefined;
  mode?: InvocationMode | undefined;
  settlement?: string | undefined;
  policy?: "allow" | "warn" | undefined;
  agentId?: string | undefined;
  /**
   * The recorded fields' filters by query parameter (schema/recorded.ts in packages/db): `tool`,
   * `method` (MCP's or A2A's), `a2a_task_id` (every invocation of one task, oldest first).
   */
  recorded?: Partial<Record<RecordedParam, string | undefined>> | undefined;
  since?: Date | undefined;
  until?: Date | undefined;
  limit: number;
  offset: number;
};

/** Invocation queries. Every function takes the tenant id: there is no unscoped read or write. */
export const invocationRepo = {
  async insert(db: Db, tenantId: string, row: NewInvocation): Promise<void> {
    await db.insert(invocations).values({ ...row, tenantId });
  },

  async get(db: Db, tenantId: string, id: string): Promise<InvocationRow | undefined> {
    const [row] = await db
      .select()
      .from(invocations)
      .where(and(eq(invocations.tenantId, tenantId), eq(invocations.id, id)))
      .limit(1);
    return row && { ...row, status: runStatus(row) };
  },

  /** Writes a terminal (or intermediate) state, and the polled result in the same transaction. */
  async update(
    db: Db,
    tenantId: string,
    id: string,
    set: InvocationUpdate,
    result?: InvocationResult | undefined,
  ): Promise<void> {
    const where = and(eq(invocations.tenantId, tenantId), eq(invocations.id, id));
    if (!result) {
      await db.update(invocations).set(set).where(where);
      return;
    }
    await db.transaction(async (tx) => {
      await tx.update(invocations).set(set).where(where);
      await tx
        .insert(invocationResults)
        .values({ invocationId: id, tenantId, ...result })
        .onConflictDoNothing();
    });
  },

  async list(
    db: Db,
    tenantId: string,
    f: InvocationFilter,
  ): Promise<{ rows: InvocationRow[]; total: number }> {
    // A filter shared by several fields (`method`) matches any: a row carries its own protocol's only.
    const recorded = RECORDED_FILTERS.flatMap((r) => {
      const value = f.recorded?.[r.param];
      return value === undefined ? [] : [{ ...r, value }];
    });
    const conds: Array<SQL | undefined> = [
      eq(invocations.tenantId, tenantId),
      f.status ? statusIs(f.status) : undefined,
      f.mode ? eq(invocations.mode, f.mode) : undefined,
      f.settlement ? eq(invocations.settlementStatus, f.settlement) : undefined,
      f.policy ? eq(invocations.policyAction, f.policy) : undefined,
      f.agentId !== undefined ? eq(invocations.agentId, f.agentId) : undefined,
      ...recorded.map(({ value, fields }) => or(...fields.map((c) => eq(invocations[c.key], value)))),
      f.since ? gte(invocations.createdAt, f.since) : undefined,
      f.until ? lte(invocations.createdAt, f.until) : undefined,
    ];
    const where = and(...conds);
    // Bodies are never part of a list: select every column but them.
    const { reqBody: _r, respBody: _s, ...columns } = getTableColumns(invocations);
    // A task's invocations read as its history: oldest first.
    const order = recorded.some((r) => r.oldestFirst)
      ? [asc(invocations.createdAt), asc(invocations.id)]
      : [desc(invocations.createdAt), desc(invocations.id)];
    const { rows, total } = await readPage<Omit<InvocationRow, "reqBody" | "respBody">>(db, invocations, {
      where,
      order,
      limit: f.limit,
      offset: f.offset,
      columns,
    });
    for (const r of rows) r.status = runStatus(r);
    return { rows: rows as InvocationRow[], total };
  },

  /** Deletes polled results past their time. Crosses tenants on purpose: a maintenance job. */
  async purgeResults(db: Db, now: Date): Promise<number> {
    const rows = await db
      .delete(invocationResults)
      .where(lt(invocationResults.expiresAt, now))
      .returning({ id: invocationResults.invocationId });
    return rows.length;
  },
};
