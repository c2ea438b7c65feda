CREATE TABLE IF NOT EXISTS "invocation_days" (
	"tenant_id" text NOT NULL,
	"day" timestamp with time zone NOT NULL,
	"agent_id" text NOT NULL,
	"invocations" bigint NOT NULL,
	"succeeded" bigint NOT NULL,
	"failed" bigint NOT NULL,
	"pcts" double precision[],
	"req_bytes" numeric NOT NULL,
	"resp_bytes" numeric NOT NULL,
	"settled_amount" numeric NOT NULL,
	CONSTRAINT "invocation_days_pkey" PRIMARY KEY("tenant_id","day","agent_id")
);
--> statement-breakpoint
CREATE TABLE IF NOT EXISTS "invocation_days_done" (
	"tenant_id" text NOT NULL,
	"day" timestamp with time zone NOT NULL,
	"rolled_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "invocation_days_done_pkey" PRIMARY KEY("tenant_id","day")
);
