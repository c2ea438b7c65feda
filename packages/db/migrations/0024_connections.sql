-- Per-user upstream authorization (docs/connections.md). A credential of kind
-- oauth2_authorization_code names the provider's endpoints; each person's grant for it is one
-- connection row, its tokens sealed like a credential's secret. A connect in progress is one
-- connection_states row: single use (deleted when redeemed), bound to tenant, sub and credential,
-- ten minutes. All new and nullable on credentials: no rewrite of existing rows.
ALTER TABLE "credentials" ADD COLUMN IF NOT EXISTS "authorization_url" text;
--> statement-breakpoint
ALTER TABLE "credentials" ADD COLUMN IF NOT EXISTS "revocation_url" text;
--> statement-breakpoint
ALTER TABLE "credentials" ADD COLUMN IF NOT EXISTS "issuer" text;
--> statement-breakpoint
ALTER TABLE "credentials" ADD COLUMN IF NOT EXISTS "resource" text;
--> statement-breakpoint
CREATE TABLE IF NOT EXISTS "connections" (
	"tenant_id" text NOT NULL,
	"sub" text NOT NULL,
	"credential_id" text NOT NULL REFERENCES "credentials"("id") ON DELETE CASCADE,
	"ciphertext" bytea NOT NULL,
	"wrapped_key" bytea NOT NULL,
	"kek_id" text NOT NULL,
	"expires_at" timestamp with time zone,
	"scopes" text,
	"last_used_at" timestamp with time zone,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	PRIMARY KEY ("tenant_id", "sub", "credential_id")
);
--> statement-breakpoint
CREATE INDEX IF NOT EXISTS "connections_credential_idx" ON "connections" ("credential_id");
--> statement-breakpoint
CREATE TABLE IF NOT EXISTS "connection_states" (
	"state_hash" text PRIMARY KEY NOT NULL,
	"tenant_id" text NOT NULL,
	"sub" text NOT NULL,
	"credential_id" text NOT NULL REFERENCES "credentials"("id") ON DELETE CASCADE,
	"ciphertext" bytea NOT NULL,
	"wrapped_key" bytea NOT NULL,
	"kek_id" text NOT NULL,
	"expires_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE INDEX IF NOT EXISTS "connection_states_expires_idx" ON "connection_states" ("expires_at");
