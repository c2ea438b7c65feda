-- Every open-row query (stale pending, overdue running, orphan streams) names mode and status,
-- which invocations_open_mode_idx covers: this index only cost two entries per call (WAL, CPU).
DROP INDEX IF EXISTS "invocations_open_idx";
