import { ConfigError, loadCliEnv, MigrateEnvSchema } from "@gw/config";
import { commandLine } from "@gw/core/command-line";
import { openStore } from "./client.ts";
import { migrate } from "./migrate.ts";

// `pnpm migrate`: applies migrations to DATABASE_URL (MigrateEnvSchema, @gw/config) and exits
// non-zero on failure.
commandLine({
  args: process.argv.slice(2),
  options: {},
  usage: "usage: DATABASE_URL=postgres://… pnpm migrate [--help]",
  help: [
    "Applies the gateway's migrations to the Postgres database at DATABASE_URL, in one transaction",
    "under an advisory lock (several replicas may run it at once), and exits non-zero on failure.",
    "Every service also migrates at start-up; this applies them by hand (docs/operations.md,",
    "Migrations with several replicas).",
  ].join("\n"),
});

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
