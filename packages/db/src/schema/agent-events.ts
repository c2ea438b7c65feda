import { bigint, index, numeric, pgTable, text, uniqueIndex } from "drizzle-orm/pg-core";
import { tstz } from "./columns.ts";

const int64 = (name: string) => bigint(name, { mode: "number" });

/**
 * Metadata-only agent activity (docs/agent-events.md). There is deliberately no column for prompts, tool
 * arguments or output, command lines or paths. `event_id` is the caller's idempotency key, unique
 * per tenant: the unique index is what makes concurrent duplicates record once.
 */
export const agentEvents = pgTable(
  "agent_events",
  {
    id: text("id").primaryKey(),
    tenantId: text("tenant_id").notNull(),
    eventId: text("event_id").notNull(),
    agentId: text("agent_id").notNull(),
    type: text("type").notNull(),
    sessionRef: text("session_ref").notNull(),
    occurredAt: tstz("occurred_at").notNull(),
    toolName: text("tool_name"),
    outcome: text("outcome"),
    durationMs: int64("duration_ms"),
    provider: text("provider"),
    model: text("model"),
    inputTokens: int64("input_tokens"),
    outputTokens: int64("output_tokens"),
    cacheReadTokens: int64("cache_read_tokens"),
    cacheWriteTokens: int64("cache_write_tokens"),
    /** Exact decimal, so sums of many small costs do not drift. */
    costUsd: numeric("cost_usd"),
    source: text("source").notNull(),
    sourceVersion: text("source_version").notNull(),
    createdAt: tstz("created_at").notNull().defaultNow(),
  },
  (t) => [
    uniqueIndex("agent_events_tenant_event_idx").on(t.tenantId, t.eventId),
    index("agent_events_tenant_agent_occurred_idx").on(t.tenantId, t.agentId, t.occurredAt),
  ],
);

export type AgentEventRow = typeof agentEvents.$inferSelect;
