-- The caller's `sub` on each invocation: the poll answers the upstream's body only to the caller that
-- made the call or to a holder of invocations:read_body (docs/interface.md). Rows written before have none,
-- so their body is shown only to a holder of the scope.
ALTER TABLE "invocations" ADD COLUMN IF NOT EXISTS "created_by" text;
