CREATE TABLE "agents" (
	"id" text PRIMARY KEY NOT NULL,
	"tenant_id" text NOT NULL,
	"name" text NOT NULL,
	"description" text,
	"upstream_url" text,
	"protocol" text DEFAULT 'http' NOT NULL,
	"mcp_transport" text,
	"mcp_protocol_version" text,
	"credential_ref" text,
	"price" jsonb,
	"status" text DEFAULT 'active' NOT NULL,
	"suspended" boolean DEFAULT false NOT NULL,
	"rate_limit" jsonb,
	"capture_bodies" boolean DEFAULT false NOT NULL,
	"emit_receipts" boolean,
	"created_by" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	"deleted_at" timestamp with time zone
);
--> statement-breakpoint
CREATE TABLE "credentials" (
	"id" text PRIMARY KEY NOT NULL,
	"tenant_id" text NOT NULL,
	"name" text NOT NULL,
	"kind" text NOT NULL,
	"header_name" text,
	"hint" text NOT NULL,
	"version" integer DEFAULT 1 NOT NULL,
	"ciphertext" "bytea" NOT NULL,
	"wrapped_key" "bytea" NOT NULL,
	"kek_id" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "invocation_results" (
	"invocation_id" text PRIMARY KEY NOT NULL,
	"tenant_id" text NOT NULL,
	"status" integer NOT NULL,
	"content_type" text,
	"body" "bytea" NOT NULL,
	"expires_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "invocations" (
	"id" text PRIMARY KEY NOT NULL,
	"tenant_id" text NOT NULL,
	"agent_id" text NOT NULL,
	"mode" text NOT NULL,
	"status" text DEFAULT 'pending' NOT NULL,
	"error_class" text,
	"model" text,
	"mcp_method" text,
	"mcp_tool" text,
	"payment_network" text,
	"payment_asset" text,
	"payment_amount" text,
	"payment_payer" text,
	"payment_nonce" text,
	"policy_action" text,
	"policy_matched_rule" text,
	"receipt_artifact_id" text,
	"settlement" jsonb,
	"settlement_status" text,
	"upstream_status" integer,
	"latency_ms" bigint,
	"ttft_ms" bigint,
	"req_size" bigint,
	"resp_size" bigint,
	"attempts" integer DEFAULT 0 NOT NULL,
	"body_captured" boolean DEFAULT false NOT NULL,
	"req_body" "bytea",
	"resp_body" "bytea",
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"started_at" timestamp with time zone,
	"completed_at" timestamp with time zone
);
--> statement-breakpoint
CREATE INDEX "agents_tenant_created_idx" ON "agents" USING btree ("tenant_id","created_at","id") WHERE "agents"."deleted_at" is null;--> statement-breakpoint
CREATE INDEX "agents_tenant_credential_idx" ON "agents" USING btree ("tenant_id","credential_ref");--> statement-breakpoint
CREATE INDEX "credentials_tenant_created_idx" ON "credentials" USING btree ("tenant_id","created_at","id");--> statement-breakpoint
CREATE UNIQUE INDEX "credentials_tenant_name_idx" ON "credentials" USING btree ("tenant_id","name");--> statement-breakpoint
CREATE INDEX "invocation_results_expires_idx" ON "invocation_results" USING btree ("expires_at");--> statement-breakpoint
CREATE INDEX "invocations_tenant_created_idx" ON "invocations" USING btree ("tenant_id","created_at" DESC NULLS LAST,"id" DESC NULLS LAST);--> statement-breakpoint
CREATE INDEX "invocations_tenant_agent_created_idx" ON "invocations" USING btree ("tenant_id","agent_id","created_at" DESC NULLS LAST);--> statement-breakpoint
CREATE INDEX "invocations_open_idx" ON "invocations" USING btree ("created_at") WHERE "invocations"."status" in ('pending', 'running');