-- invocations_analytics_idx (migration 0005) held every column the analytics aggregate reads, so
-- every invocation wrote an entry into it twice: at its insert and at its terminal write (which
-- changes status, latency_ms and resp_size, all in the index). Measured on a completed
-- transactional call: about 470 of its 3,400 bytes of WAL, the largest index of the table. Since
-- closed days come from the rollup (ADR 0007), the index served only the live part of a window
-- (the days not rolled up yet) and each day's one rollup; both now range-scan the (tenant,
-- created_at) and (tenant, agent, created_at) indexes and read the rows (ADR 0037).
-- A catalog change only: no rewrite, and a build without this migration reads the same rows
-- through those indexes (slower analytics, same figures), so replicas of either build run together.
DROP INDEX IF EXISTS "invocations_analytics_idx";
