CREATE TABLE IF NOT EXISTS "policies" (
	"tenant_id" text PRIMARY KEY NOT NULL,
	"version" integer NOT NULL,
	"document" jsonb NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE IF NOT EXISTS "policy_decisions" (
	"id" text PRIMARY KEY NOT NULL,
	"tenant_id" text NOT NULL,
	"agent_id" text NOT NULL,
	"protocol" text NOT NULL,
	"mcp_tool" text,
	"action" text NOT NULL,
	"matched_rule" text NOT NULL,
	"reason" text NOT NULL,
	"receipt_artifact_id" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE INDEX IF NOT EXISTS "policy_decisions_tenant_created_idx" ON "policy_decisions" USING btree ("tenant_id","created_at" DESC NULLS LAST,"id" DESC NULLS LAST);
--> statement-breakpoint
CREATE INDEX IF NOT EXISTS "policy_decisions_tenant_agent_created_idx" ON "policy_decisions" USING btree ("tenant_id","agent_id","created_at" DESC NULLS LAST,"id" DESC NULLS LAST);
--> statement-breakpoint
CREATE INDEX IF NOT EXISTS "policy_decisions_tenant_action_created_idx" ON "policy_decisions" USING btree ("tenant_id","action","created_at" DESC NULLS LAST,"id" DESC NULLS LAST);
--> statement-breakpoint
CREATE TABLE IF NOT EXISTS "receipts" (
	"id" text PRIMARY KEY NOT NULL,
	"tenant_id" text NOT NULL,
	"subject_id" text NOT NULL,
	"action" text NOT NULL,
	"actor" text NOT NULL,
	"jws" text NOT NULL,
	"signed_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE INDEX IF NOT EXISTS "receipts_tenant_subject_idx" ON "receipts" USING btree ("tenant_id","subject_id");
