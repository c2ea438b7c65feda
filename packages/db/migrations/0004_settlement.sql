CREATE TABLE IF NOT EXISTS "settlement_configs" (
	"tenant_id" text PRIMARY KEY NOT NULL,
	"facilitator_url" text NOT NULL,
	"facilitator_credential_ref" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE INDEX IF NOT EXISTS "settlement_configs_credential_idx" ON "settlement_configs" USING btree ("tenant_id","facilitator_credential_ref");
