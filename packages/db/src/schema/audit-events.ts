import { bigint, index, jsonb, pgTable, text, uniqueIndex } from "drizzle-orm/pg-core";
import { tstz } from "./columns.ts";

/** A field's value before and after a write; a secret field carries neither (`{}`). */
export type AuditChange = { from?: unknown; to?: unknown };

/**
 * One control-plane write (docs/audit.md). Each tenant's events form one hash chain in `seq`
 * order: `digest` is the sha256 of `prev_digest` and the RFC 8785 canonical event, so an altered or
 * removed event breaks every digest after it. Appended in the same transaction as the write.
 */
export const auditEvents = pgTable(
  "audit_events",
  {
    id: text("id").primaryKey(),
    tenantId: text("tenant_id").notNull(),
    /** Position in the tenant's chain, from 1 with no gaps (writes of one tenant are serialised). */
    seq: bigint("seq", { mode: "number" }).notNull(),
    actor: text("actor").notNull(),
    action: text("action").notNull(),
    resourceId: text("resource_id").notNull(),
    requestId: text("request_id").notNull(),
    createdAt: tstz("created_at").notNull(),
    changes: jsonb("changes").$type<Record<string, AuditChange>>().notNull(),
    /** The previous event's digest; null for a tenant's first event. */
    prevDigest: text("prev_digest"),
    digest: text("digest").notNull(),
  },
  (t) => [
    uniqueIndex("audit_events_tenant_seq_idx").on(t.tenantId, t.seq),
    index("audit_events_tenant_created_idx").on(t.tenantId, t.createdAt),
    index("audit_events_tenant_action_idx").on(t.tenantId, t.action, t.seq.desc()),
    index("audit_events_tenant_actor_idx").on(t.tenantId, t.actor, t.seq.desc()),
    index("audit_events_tenant_resource_idx").on(t.tenantId, t.resourceId, t.seq.desc()),
  ],
);

export type AuditEventRow = typeof auditEvents.$inferSelect;
