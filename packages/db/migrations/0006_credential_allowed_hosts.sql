ALTER TABLE "credentials" ADD COLUMN IF NOT EXISTS "allowed_hosts" jsonb;
