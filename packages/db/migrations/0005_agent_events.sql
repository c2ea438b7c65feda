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
--> statement-breakpoint
CREATE INDEX IF NOT EXISTS "invocations_analytics_idx" ON "invocations" USING btree ("tenant_id",date_bin('1 day'::interval, "created_at", '2000-01-01 00:00:00+00'::timestamptz),"agent_id","latency_ms") INCLUDE ("created_at","status","req_size","resp_size");
--> statement-breakpoint
CREATE INDEX IF NOT EXISTS "invocations_analytics_settled_idx" ON "invocations" USING btree ("tenant_id","created_at") INCLUDE ("agent_id","settlement") WHERE "settlement_status" in ('settled', 'settled_upstream_failed') and ("settlement" ->> 'settled_amount') ~ '^[0-9]{1,78}$';
