import { randomBytes } from "node:crypto";
import { chmodSync, linkSync, readFileSync, statSync, unlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";

/**
 * The development secrets a gateway on a data directory generates once and keeps there, each in a
 * file of mode 0600 holding what its variable would hold: the key-encryption key of credentials
 * (GW_KMS_KEY's form, base64 of 32 bytes) and the dev token signing secret (GW_DEV_JWT_SECRET's).
 */
export const KEPT = {
  kmsKey: {
    file: "kms.key",
    variable: "GW_KMS_KEY",
    generate: () => randomBytes(32).toString("base64"),
    valid: (s: string) => Buffer.from(s, "base64").length === 32,
    form: "a base64 32-byte key",
    /** Said when the file is damaged: what is lost without it. */
    loss: "credentials sealed under it do not open without it",
  },
  devJwtSecret: {
    file: "dev-jwt.secret",
    variable: "GW_DEV_JWT_SECRET",
    generate: () => randomBytes(32).toString("base64url"),
    valid: (s: string) => s.length >= 32,
    form: "a secret of at least 32 characters",
    loss: "tokens signed with it are no longer accepted without it; remove the file to make another",
  },
} as const;

export type KeptSecret = (typeof KEPT)[keyof typeof KEPT];

/** A kept file that is there but does not hold what it should: one line, naming it. */
export class KeptSecretDamaged extends Error {
  override name = "KeptSecretDamaged";
}

/** The secret kept in `dir`, or undefined when there is none yet. Throws KeptSecretDamaged. */
export function readKept(dir: string, kept: KeptSecret): string | undefined {
  const file = join(dir, kept.file);
  let raw: string;
  try {
    raw = readFileSync(file, "utf8");
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw new KeptSecretDamaged(`${file} cannot be read (${(e as NodeJS.ErrnoException).code})`);
  }
  const value = raw.trim();
  if (!kept.valid(value)) {
    throw new KeptSecretDamaged(`${file} does not hold ${kept.form}; restore it (${kept.loss})`);
  }
  // Copied in with wider permissions: the file's secret is every tenant's.
  if ((statSync(file).mode & 0o777) !== 0o600) chmodSync(file, 0o600);
  return value;
}

/**
 * The secret kept in `dir`, or a new one written there (mode 0600), whole or not at all: two
 * gateways that start at once from one checkout end up with the same secret, never two.
 */
export function keptOrNew(dir: string, kept: KeptSecret): { value: string; created: boolean } {
  const value = readKept(dir, kept);
  if (value !== undefined) return { value, created: false };
  const fresh = kept.generate();
  const file = join(dir, kept.file);
  const temp = `${file}.${process.pid}.tmp`;
  writeFileSync(temp, `${fresh}\n`, { mode: 0o600 });
  try {
    linkSync(temp, file);
    return { value: fresh, created: true };
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== "EEXIST") throw e;
    const raced = readKept(dir, kept);
    if (raced === undefined) throw new KeptSecretDamaged(`${file} was removed while it was being created`);
    return { value: raced, created: false };
  } finally {
    unlinkSync(temp);
  }
}
