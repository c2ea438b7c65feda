-- The audit log (docs/audit.md): every control-plane write, one hash chain per tenant in seq order.
CREATE TABLE IF NOT EXISTS "audit_events" (
	"id" text PRIMARY KEY NOT NULL,
	"tenant_id" text NOT NULL,
	"seq" bigint NOT NULL,
	"actor" text NOT NULL,
	"action" text NOT NULL,
	"resource_id" text NOT NULL,
	"request_id" text NOT NULL,
	"created_at" timestamp with time zone NOT NULL,
	"changes" jsonb NOT NULL,
	"prev_digest" text,
	"digest" text NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX IF NOT EXISTS "audit_events_tenant_seq_idx" ON "audit_events" ("tenant_id","seq");
--> statement-breakpoint
CREATE INDEX IF NOT EXISTS "audit_events_tenant_created_idx" ON "audit_events" ("tenant_id","created_at");
--> statement-breakpoint
CREATE INDEX IF NOT EXISTS "audit_events_tenant_action_idx" ON "audit_events" ("tenant_id","action","seq" DESC);
--> statement-breakpoint
CREATE INDEX IF NOT EXISTS "audit_events_tenant_actor_idx" ON "audit_events" ("tenant_id","actor","seq" DESC);
--> statement-breakpoint
CREATE INDEX IF NOT EXISTS "audit_events_tenant_resource_idx" ON "audit_events" ("tenant_id","resource_id","seq" DESC);
