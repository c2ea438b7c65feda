import { ConfigError, loadCliEnv, MigrateEnvSchema } from "@gw/config";
import { openStore } from "./client.ts";
import { migrate } from "./migrate.ts";

// `pnpm migrate`: applies migrations to DATABASE_URL (MigrateEnvSchema, @gw/config) and exits
// non-zero on failure.
function databaseUrl(): string {
  try {
    return loadCliEnv(MigrateEnvSchema).DATABASE_URL;
  } catch (e) {
    if (!(e instanceof ConfigError)) throw e;
    console.error(e.message);
    process.exit(2);
  }
}

const url = databaseUrl();
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
