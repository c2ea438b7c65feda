import { ConfigError, loadCliEnv, RotateKekEnvSchema } from "@gw/config";
import { commandLine } from "@gw/core/command-line";
import { openStore } from "@gw/db";
import { rewrapConnections } from "./connections/rewrap.ts";
import { createKeyring } from "./keyring.ts";
import { rewrapAll } from "./rewrap.ts";

// `pnpm --filter @gw/vault rotate-kek`: re-wraps every credential's data key, and every sealed
// connection row's (people's grants, connects in progress), from GW_KMS_KEY_OLD to GW_KMS_KEY_NEW
// in DATABASE_URL (docs/credentials.md, docs/connections.md). A standalone operator entry point with its
// own environment schema (RotateKekEnvSchema, @gw/config); it never prints a key, only key
// fingerprints and row ids.
commandLine({
  args: process.argv.slice(2),
  options: {},
  usage:
    "usage: DATABASE_URL=… GW_KMS_KEY_OLD=… GW_KMS_KEY_NEW=… pnpm --filter @gw/vault rotate-kek [--help]",
  help: [
    "Re-wraps every credential's data key, and every connection's (people's grants), of all tenants",
    "from the key-encryption key GW_KMS_KEY_OLD to GW_KMS_KEY_NEW (base64, 32 bytes each) in the",
    "database at DATABASE_URL, in batches, and prints one JSON line: the rows re-wrapped and the ids",
    "it left alone. Exit 1 when any were left alone; running it again is safe. It never prints a key",
    "(docs/credentials.md, Rotating the key-encryption key).",
  ].join("\n"),
});

function environment() {
  try {
    return loadCliEnv(RotateKekEnvSchema);
  } catch (e) {
    if (!(e instanceof ConfigError)) throw e;
    console.error(e.message);
    process.exit(2);
  }
}

const env = environment();
const url = env.DATABASE_URL;
const from = createKeyring(env.GW_KMS_KEY_OLD);
const to = createKeyring(env.GW_KMS_KEY_NEW);
if (from.kekId === to.kekId) {
  console.error("GW_KMS_KEY_OLD and GW_KMS_KEY_NEW are the same key");
  process.exit(2);
}
const store = await openStore(url, { maxConnections: 2 });
try {
  const report = await rewrapAll({ db: store.db, from, to });
  // People's grants (and connects in progress) are sealed with the same keys (docs/connections.md).
  const connections = await rewrapConnections({ db: store.db, from, to });
  console.log(
    JSON.stringify({ msg: "credentials re-wrapped", from: from.kekId, to: to.kekId, ...report, connections }),
  );
  for (const r of [report, connections]) {
    if (r.unknownKek.length || r.failed.length || r.raced.length) process.exitCode = 1;
  }
} catch (e) {
  console.error(`rotation failed: ${e instanceof Error ? e.message : String(e)}`);
  process.exitCode = 1;
} finally {
  await store.close();
}
