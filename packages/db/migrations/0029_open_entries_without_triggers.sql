-- The open entries of ADR 0046 (a transactional call's stored request, a row in invocation_open
-- for any other open row) are now written and deleted by the gateway's own statements, in the
-- statement that inserts or completes the row (data-modifying CTEs), not by row triggers: the
-- triggers tripled Postgres' CPU per completed transactional call (docs/performance.md, "The
-- completion as a HOT update"). Rows written by a build that still had the triggers keep their
-- entries; a completion by this build deletes them.
DROP TRIGGER IF EXISTS "invocations_opened" ON "invocations";
--> statement-breakpoint
DROP TRIGGER IF EXISTS "invocations_completed" ON "invocations";
--> statement-breakpoint
DROP TRIGGER IF EXISTS "invocations_deleted" ON "invocations";
--> statement-breakpoint
DROP FUNCTION IF EXISTS "gw_invocation_opened"();
--> statement-breakpoint
DROP FUNCTION IF EXISTS "gw_invocation_closed"();
