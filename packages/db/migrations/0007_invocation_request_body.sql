CREATE TABLE IF NOT EXISTS "invocation_requests" (
	"invocation_id" text PRIMARY KEY NOT NULL,
	"tenant_id" text NOT NULL,
	"queue" text NOT NULL,
	"job" jsonb NOT NULL,
	"body" bytea NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "invocations" ADD COLUMN IF NOT EXISTS "instance_id" text;
--> statement-breakpoint
CREATE INDEX IF NOT EXISTS "invocations_open_mode_idx" ON "invocations" ("mode", "status", "created_at") WHERE "status" in ('pending', 'running');
--> statement-breakpoint
ALTER TABLE "agents" ADD COLUMN IF NOT EXISTS "max_concurrency" integer;
--> statement-breakpoint
CREATE TABLE IF NOT EXISTS "gw_instances" (
	"id" text PRIMARY KEY NOT NULL,
	"service" text NOT NULL,
	"started_at" timestamp with time zone DEFAULT now() NOT NULL,
	"seen_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE IF NOT EXISTS "gw_leases" (
	"name" text PRIMARY KEY NOT NULL,
	"holder" text NOT NULL,
	"until" timestamp with time zone NOT NULL
);
