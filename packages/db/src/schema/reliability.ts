import { jsonb, pgTable, text } from "drizzle-orm/pg-core";
import { tstz } from "./columns.ts";
import { bytea } from "./invocations.ts";

/**
 * What a transactional call's job is rebuilt from (docs/reliability.md): the job's fields (jsonb)
 * and the bytes to forward, written in the same statement as the `pending` invocation. Postgres is
 * the source of truth, the BullMQ job only its doorbell. Deleted when the invocation completes (a
 * trigger, migration 0028): the stored requests are the transactional calls' open entries.
 */
export const invocationRequests = pgTable("invocation_requests", {
  invocationId: text("invocation_id").primaryKey(),
  tenantId: text("tenant_id").notNull(),
  /** The BullMQ queue the job belongs on: only that deployment's reconciler rings for it. */
  queue: text("queue").notNull(),
  job: jsonb("job").$type<Record<string, unknown>>().notNull(),
  body: bytea("body").notNull(),
  createdAt: tstz("created_at").notNull().defaultNow(),
});

/**
 * The open invocations (completed_at null) that have no stored request, kept by triggers on
 * invocations (migration 0028): a row enters when inserted open and leaves when its completed_at is
 * first set or it is deleted. A transactional call's open entry is its stored request (deleted by
 * the same trigger). The reconciler and the sweeper find their candidates there, so no index of
 * invocations reads a column a completion changes: every completion can be a HOT update (ADR 0046).
 */
export const invocationOpen = pgTable("invocation_open", {
  invocationId: text("invocation_id").primaryKey(),
  tenantId: text("tenant_id").notNull(),
});

/** Live processes (heartbeats): an open streaming record whose process stopped beating is ended. */
export const gwInstances = pgTable("gw_instances", {
  id: text("id").primaryKey(),
  service: text("service").notNull(),
  startedAt: tstz("started_at").notNull().defaultNow(),
  seenAt: tstz("seen_at").notNull().defaultNow(),
});

/** Short leases so one replica at a time runs a periodic job (reconciler, sweeper). */
export const gwLeases = pgTable("gw_leases", {
  name: text("name").primaryKey(),
  holder: text("holder").notNull(),
  until: tstz("until").notNull(),
});
