CREATE TABLE IF NOT EXISTS "agent_events" (
	"id" text PRIMARY KEY NOT NULL,
	"tenant_id" text NOT NULL,
	"event_id" text NOT NULL,
	"agent_id" text NOT NULL,
	"type" text NOT NULL,
	"session_ref" text NOT NULL,
	"occurred_at" timestamp with time zone NOT NULL,
	"tool_name" text,
	"outcome" text,
	"duration_ms" bigint,
	"provider" text,
	"model" text,
	"input_tokens" bigint,
	"output_tokens" bigint,
	"cache_read_tokens" bigint,
	"cache_write_tokens" bigint,
	"cost_usd" numeric,
	"source" text NOT NULL,
	"source_version" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX IF NOT EXISTS "agent_events_tenant_event_idx" ON "agent_events" USING btree ("tenant_id","event_id");
--> statement-breakpoint
CREATE INDEX IF NOT EXISTS "agent_events_tenant_agent_occurred_idx" ON "agent_events" USING btree ("tenant_id","agent_id","occurred_at");
