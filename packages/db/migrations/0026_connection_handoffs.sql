-- A connect whose provider redirect came back (docs/connections.md, Security): the callback
-- exchanged the code and sealed the grant, but the grant is stored as a connection only when the
-- signed-in console of the same person confirms it with the one-time code the callback handed
-- over (its sha256 is the key). Single use (deleted when redeemed), five minutes, bound to tenant,
-- sub and credential. A new table: no rewrite of existing rows.
CREATE TABLE IF NOT EXISTS "connection_handoffs" (
	"code_hash" text PRIMARY KEY NOT NULL,
	"tenant_id" text NOT NULL,
	"sub" text NOT NULL,
	"credential_id" text NOT NULL REFERENCES "credentials"("id") ON DELETE CASCADE,
	"ciphertext" bytea NOT NULL,
	"wrapped_key" bytea NOT NULL,
	"kek_id" text NOT NULL,
	"token_expires_at" timestamp with time zone,
	"scopes" text,
	"expires_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE INDEX IF NOT EXISTS "connection_handoffs_expires_idx" ON "connection_handoffs" ("expires_at");
