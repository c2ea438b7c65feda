// Setup of the embedded pass (docs/testing.md): runs in the worker before each test file imports
// anything, so the file and every process it spawns see no Postgres or Redis and use the embedded
// store and the in-process queue.
delete process.env.DATABASE_URL;
delete process.env.REDIS_URL;
process.env.GW_TEST_PASS = "embedded";
