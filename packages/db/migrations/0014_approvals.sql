-- Approvals (docs/policy.md "Approvals"): a person's decision on one call a require_approval rule
-- held. One pending row per binding (the same caller repeating the call gets the same id); an
-- approved row is found through its binding and used once.
CREATE TABLE IF NOT EXISTS "approvals" (
	"id" text PRIMARY KEY NOT NULL,
	"tenant_id" text NOT NULL,
	"agent_id" text NOT NULL,
	"sub" text NOT NULL,
	"mcp_method" text NOT NULL,
	"mcp_tool" text NOT NULL,
	"call_digest" text NOT NULL,
	"arguments" text,
	"status" text NOT NULL,
	"reason" text,
	"requested_at" timestamp with time zone DEFAULT now() NOT NULL,
	"decided_at" timestamp with time zone,
	"decided_by" text,
	"expires_at" timestamp with time zone NOT NULL,
	"used_at" timestamp with time zone
);
--> statement-breakpoint
CREATE UNIQUE INDEX IF NOT EXISTS "approvals_pending_binding_idx" ON "approvals" ("tenant_id","agent_id","sub","mcp_method","mcp_tool","call_digest") WHERE status = 'pending';
--> statement-breakpoint
CREATE INDEX IF NOT EXISTS "approvals_approved_binding_idx" ON "approvals" ("tenant_id","agent_id","sub","mcp_method","mcp_tool","call_digest") WHERE status = 'approved';
--> statement-breakpoint
CREATE INDEX IF NOT EXISTS "approvals_tenant_requested_idx" ON "approvals" ("tenant_id","requested_at" DESC,"id" DESC);
