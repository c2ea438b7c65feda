import { mkdirSync } from "node:fs";
import { join, resolve } from "node:path";
import { DataDirBusy, lockDataDir } from "./lock.ts";
import { KEPT, KeptSecretDamaged, keptOrNew, readKept } from "./secrets.ts";

// The data directory (GW_DATA_DIR) of `pnpm start`: where it keeps what it makes itself, so that a
// restart finds it again (docs/operations.md, The embedded store on disk):
//
//   gateway.pid      the pid of the gateway whose embedded store is open here (lock.ts)
//   postgres/        the embedded store's files (@gw/db)
//   kms.key          the credentials key-encryption key, with the store and without GW_KMS_KEY
//                    (secrets.ts)
//   dev-jwt.secret   the dev token signing secret, without token configuration
export { KEPT, KeptSecretDamaged, readKept } from "./secrets.ts";

/** GW_DATA_DIR's default, under the working directory. */
export const DEFAULT_DATA_DIR = ".gateway/data";

/** GW_DATA_DIR's value that keeps nothing on disk. */
export const MEMORY = "memory";

/** The data directory GW_DATA_DIR names, absolute; undefined for `memory`. */
export function dataDirPath(
  env: Record<string, string | undefined>,
  cwd = process.cwd(),
): string | undefined {
  const given = env.GW_DATA_DIR?.trim() || DEFAULT_DATA_DIR;
  return given === MEMORY ? undefined : resolve(cwd, given);
}

/** A data directory this gateway cannot use: one line naming GW_DATA_DIR, and the exit status. */
export class DataDirError extends Error {
  override name = "DataDirError";
  constructor(
    message: string,
    readonly exitCode: 1 | 2,
  ) {
    super(message);
  }
}

export type DataDir = {
  /** The directory, absolute. */
  path: string;
  /** Whether the embedded store is here (no DATABASE_URL): this process holds the directory. */
  store: boolean;
  /** The kept key-encryption key, when GW_KMS_KEY is unset. */
  key: { kek: Buffer; file: string } | undefined;
  /** The kept dev token secret, when there is no token configuration. */
  devSecret: string | undefined;
  /** What to tell the operator once the logger exists. */
  warnings: string[];
};

/**
 * Opens the data directory for `pnpm start`, before the runtime: creates it (mode 0700), takes it
 * when the embedded store will be there (a second gateway on it → DataDirError, exit 2), and
 * reads or generates each development secret the environment does not provide. Undefined when
 * nothing is to be kept: GW_DATA_DIR=memory, or everything comes from the environment.
 */
export async function openDataDir(env: Record<string, string | undefined>): Promise<DataDir | undefined> {
  const path = dataDirPath(env);
  const store = !env.DATABASE_URL;
  const needsDevSecret = !env.GW_JWKS_URL && !env.GW_DEV_JWT_SECRET;
  if (!path || !(store || needsDevSecret)) return undefined;
  try {
    mkdirSync(path, { recursive: true, mode: 0o700 });
    if (store) await lockDataDir(path);
    const warnings: string[] = [];
    return {
      path,
      store,
      key: store ? keptKey(path, env.GW_KMS_KEY, warnings) : undefined,
      devSecret: needsDevSecret ? keptOrNew(path, KEPT.devJwtSecret).value : undefined,
      warnings,
    };
  } catch (e) {
    if (e instanceof DataDirBusy) {
      throw new DataDirError(
        `GW_DATA_DIR ${path} is in use by another gateway (pid ${e.pid}); stop that one, or set GW_DATA_DIR to another directory`,
        2,
      );
    }
    if (e instanceof KeptSecretDamaged) throw new DataDirError(`GW_DATA_DIR: ${e.message}`, 1);
    const code = (e as NodeJS.ErrnoException).code;
    if (!code) throw e;
    throw new DataDirError(
      `GW_DATA_DIR ${path} cannot be used (${code}); set GW_DATA_DIR to a writable directory, or to ${MEMORY}`,
      1,
    );
  }
}

/**
 * The key-encryption key kept beside the embedded store, made on first use; undefined with
 * GW_KMS_KEY (the operator's key wins, and a different one leaves what the kept key sealed
 * unreadable: said in `warnings`). Only beside the store: credentials in a Postgres database are
 * opened by other processes too, which must share the key through GW_KMS_KEY.
 */
function keptKey(path: string, configured: string | undefined, warnings: string[]): DataDir["key"] {
  const file = join(path, KEPT.kmsKey.file);
  if (!configured) return { kek: Buffer.from(keptOrNew(path, KEPT.kmsKey).value, "base64"), file };
  const kept = readKept(path, KEPT.kmsKey);
  if (kept !== undefined && !Buffer.from(kept, "base64").equals(Buffer.from(configured.trim(), "base64"))) {
    warnings.push(
      `GW_KMS_KEY is set: credentials sealed under the key kept in ${file} do not open under it; to keep them, set GW_KMS_KEY to that file's content`,
    );
  }
  return undefined;
}
