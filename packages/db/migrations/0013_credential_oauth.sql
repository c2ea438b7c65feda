-- OAuth upstream credentials (docs/credentials.md): the token endpoint and the client's public
-- settings. The client secret is sealed in "ciphertext" like every other secret; tokens are never
-- stored (they live in each process's memory until 30 s before they expire).
ALTER TABLE "credentials" ADD COLUMN IF NOT EXISTS "token_url" text;
--> statement-breakpoint
ALTER TABLE "credentials" ADD COLUMN IF NOT EXISTS "client_id" text;
--> statement-breakpoint
ALTER TABLE "credentials" ADD COLUMN IF NOT EXISTS "scope" text;
--> statement-breakpoint
ALTER TABLE "credentials" ADD COLUMN IF NOT EXISTS "audience" text;
--> statement-breakpoint
ALTER TABLE "credentials" ADD COLUMN IF NOT EXISTS "auth_method" text;
