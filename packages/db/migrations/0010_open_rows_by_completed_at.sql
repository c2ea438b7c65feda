-- The open-row index answers to "completed_at is null", no longer to "status in ('pending', 'running')".
-- With the status predicate, every statement that changes one row by id and checks its status (the
-- worker's claim, failIfOpen, the repeat) could be planned through this index, and was whenever
-- ANALYZE had last seen no open rows: the claim then walked every open row of every tenant per batch,
-- so the drain slowed as the backlog grew (2,112 µs of Postgres CPU per call; ADR 0024).
-- Those statements do not name completed_at, so only the primary key can serve them now; the queries
-- that list open rows (reconciler, sweeper) say "completed_at is null" themselves.
-- Every terminal write sets completed_at; rows that somehow lack it get it first, so none counts as open.
UPDATE "invocations" SET "completed_at" = coalesce("started_at", "created_at")
WHERE "completed_at" IS NULL AND "status" IN ('succeeded', 'failed');
--> statement-breakpoint
CREATE INDEX IF NOT EXISTS "invocations_unfinished_idx" ON "invocations" ("mode", "status", "created_at") WHERE "completed_at" IS NULL;
--> statement-breakpoint
DROP INDEX IF EXISTS "invocations_open_mode_idx";
