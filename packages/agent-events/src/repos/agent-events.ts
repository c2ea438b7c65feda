import { agentEvents, type Db } from "@gw/db";
import { and, eq, gte, lte, sql } from "drizzle-orm";

export type NewAgentEvent = Omit<typeof agentEvents.$inferInsert, "tenantId" | "createdAt">;

export type AgentEventSummary = {
  sessions: number;
  toolCalls: number;
  toolsSucceeded: number;
  toolsFailed: number;
  toolDurationMs: number;
  inputTokens: number;
  outputTokens: number;
  /** Exact decimal sum, as Postgres prints it. */
  costUsd: string;
  costKnown: boolean;
  lastEventAt: Date | null;
};

const inWindow = (tenantId: string, agentId: string, since: Date, until: Date) =>
  and(
    eq(agentEvents.tenantId, tenantId),
    eq(agentEvents.agentId, agentId),
    gte(agentEvents.occurredAt, since),
    lte(agentEvents.occurredAt, until),
  );

const isType = (type: string) => sql`${agentEvents.type} = ${sql.raw(`'${type}'`)}`;
const sumWhere = (col: typeof agentEvents.inputTokens, type: string) =>
  sql<string>`coalesce(sum(${col}) filter (where ${isType(type)}), 0)::text`;

/** Agent event queries. Every function takes the tenant id: there is no unscoped read or write. */
export const agentEventRepo = {
  /**
   * Records an event unless the tenant already has its `event_id`. The unique index decides, so
   * concurrent duplicates record exactly once. True when this call recorded it.
   */
  async insert(db: Db, tenantId: string, row: NewAgentEvent): Promise<boolean> {
    const rows = await db
      .insert(agentEvents)
      .values({ ...row, tenantId })
      .onConflictDoNothing({ target: [agentEvents.tenantId, agentEvents.eventId] })
      .returning({ id: agentEvents.id });
    return rows.length > 0;
  },

  /** The activity summary of one agent over [since, until] on occurred_at, in one statement. */
  async summary(
    db: Db,
    tenantId: string,
    agentId: string,
    since: Date,
    until: Date,
  ): Promise<AgentEventSummary> {
    const [r] = await db
      .select({
        sessions:
          sql<number>`count(distinct ${agentEvents.sessionRef}) filter (where ${isType("session.started")})`.mapWith(
            Number,
          ),
        toolCalls: sql<number>`count(*) filter (where ${isType("tool.completed")})`.mapWith(Number),
        toolsSucceeded:
          sql<number>`count(*) filter (where ${isType("tool.completed")} and ${agentEvents.outcome} = 'succeeded')`.mapWith(
            Number,
          ),
        toolsFailed:
          sql<number>`count(*) filter (where ${isType("tool.completed")} and ${agentEvents.outcome} in ('failed', 'cancelled'))`.mapWith(
            Number,
          ),
        toolDurationMs: sumWhere(agentEvents.durationMs, "tool.completed").mapWith(Number),
        inputTokens: sumWhere(agentEvents.inputTokens, "model.usage").mapWith(Number),
        outputTokens: sumWhere(agentEvents.outputTokens, "model.usage").mapWith(Number),
        costUsd: sql<string>`coalesce(sum(${agentEvents.costUsd}) filter (where ${isType("model.usage")}), 0)::text`,
        costKnown: sql<boolean>`coalesce(bool_and(${agentEvents.costUsd} is not null) filter (where ${isType("model.usage")}), true)`,
        lastEventAt: sql<Date | null>`max(${agentEvents.occurredAt})`.mapWith(agentEvents.occurredAt),
      })
      .from(agentEvents)
      .where(inWindow(tenantId, agentId, since, until));
    if (!r) throw new Error("aggregate returned no row");
    return r;
  },
};
