import { bigint, doublePrecision, numeric, pgTable, primaryKey, text } from "drizzle-orm/pg-core";
import { tstz } from "./columns.ts";

/**
 * Analytics of one closed UTC day per agent (ADR 0007): what `GET /v1/analytics?bucket=day` would
 * compute from the invocations of that day, computed once by the first read that needs it.
 */
export const invocationDays = pgTable(
  "invocation_days",
  {
    tenantId: text("tenant_id").notNull(),
    day: tstz("day").notNull(),
    agentId: text("agent_id").notNull(),
    invocations: bigint("invocations", { mode: "number" }).notNull(),
    succeeded: bigint("succeeded", { mode: "number" }).notNull(),
    failed: bigint("failed", { mode: "number" }).notNull(),
    /** p50, p95, p99 of latency_ms (continuous), null when no row had a latency. */
    pcts: doublePrecision("pcts").array(),
    reqBytes: numeric("req_bytes").notNull(),
    respBytes: numeric("resp_bytes").notNull(),
    settledAmount: numeric("settled_amount").notNull(),
  },
  (t) => [primaryKey({ name: "invocation_days_pkey", columns: [t.tenantId, t.day, t.agentId] })],
);

/** The (tenant, day) pairs already rolled up, days without invocations included. */
export const invocationDaysDone = pgTable(
  "invocation_days_done",
  {
    tenantId: text("tenant_id").notNull(),
    day: tstz("day").notNull(),
    rolledAt: tstz("rolled_at").notNull().defaultNow(),
  },
  (t) => [primaryKey({ name: "invocation_days_done_pkey", columns: [t.tenantId, t.day] })],
);
