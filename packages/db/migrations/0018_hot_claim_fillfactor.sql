-- A transactional call's claim writes only columns no index reads (started_at, attempts), so it can
-- be a HOT update: the new row version stays on its page and no index gets a new entry (ADR 0030).
-- A HOT update needs room on the row's page, and a claim batch claims most rows of a page at once:
-- new pages of invocations are filled to 50 %, leaving room for every row's claim (measured: 85 %
-- left room for an eighth of them). The old versions are pruned once the claims commit and the
-- completions move the rows on, so the space is reused by later inserts (the table did not grow).
-- A catalog change only (SHARE UPDATE EXCLUSIVE lock, no rewrite: existing pages keep their rows;
-- reads and writes go on meanwhile).
ALTER TABLE "invocations" SET (fillfactor = 50);
