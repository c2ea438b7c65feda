import { openStore } from "./client.ts";
import { migrate } from "./migrate.ts";

// `pnpm migrate`: applies migrations to DATABASE_URL and exits non-zero on failure.
const url = process.env.DATABASE_URL;
if (!url) {
  console.error("DATABASE_URL is required");
  process.exit(2);
}
const store = await openStore(url, { maxConnections: 1 });
try {
  const { applied } = await migrate(store);
  console.log(JSON.stringify({ msg: "migrations applied", applied }));
} catch (e) {
  console.error(`migration failed: ${e instanceof Error ? e.message : String(e)}`);
  process.exitCode = 1;
} finally {
  await store.close();
}
