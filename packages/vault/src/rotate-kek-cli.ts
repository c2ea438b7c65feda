import { ConfigError, loadCliEnv, RotateKekEnvSchema } from "@gw/config";
import { openStore } from "@gw/db";
import { createKeyring } from "./keyring.ts";
import { rewrapAll } from "./rewrap.ts";

// `pnpm --filter @gw/vault rotate-kek`: re-wraps every credential's data key from GW_KMS_KEY_OLD to
// GW_KMS_KEY_NEW in DATABASE_URL (docs/credentials.md). A standalone operator entry point with its
// own environment schema (RotateKekEnvSchema, @gw/config); it never prints a key, only key
// fingerprints and row ids.
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
  console.log(JSON.stringify({ msg: "credentials re-wrapped", from: from.kekId, to: to.kekId, ...report }));
  if (report.unknownKek.length || report.failed.length || report.raced.length) process.exitCode = 1;
} catch (e) {
  console.error(`rotation failed: ${e instanceof Error ? e.message : String(e)}`);
  process.exitCode = 1;
} finally {
  await store.close();
}
