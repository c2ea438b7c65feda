import { openStore } from "@gw/db";
import { createKeyring } from "./keyring.ts";
import { rewrapAll } from "./rewrap.ts";

// `pnpm --filter @gw/vault rotate-kek`: re-wraps every credential's data key from GW_KMS_KEY_OLD to
// GW_KMS_KEY_NEW in DATABASE_URL (docs/credentials.md). A standalone operator entry point, so it
// reads its own environment; it never prints a key, only key fingerprints and row ids.
function key(name: string): Buffer {
  const raw = process.env[name];
  const buf = raw ? Buffer.from(raw, "base64") : undefined;
  if (buf?.length !== 32) {
    console.error(`${name} must be set to a base64-encoded 32-byte key`);
    process.exit(2);
  }
  return buf;
}

const url = process.env.DATABASE_URL;
if (!url) {
  console.error("DATABASE_URL is required");
  process.exit(2);
}
const from = createKeyring(key("GW_KMS_KEY_OLD"));
const to = createKeyring(key("GW_KMS_KEY_NEW"));
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
