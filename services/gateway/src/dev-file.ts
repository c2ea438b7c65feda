import { randomBytes } from "node:crypto";
import { chmodSync, readFileSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";

/**
 * The git-ignored file where `pnpm start` keeps the dev signing secret it generated, so the next
 * start reuses it (tokens stay valid across restarts) and `pnpm dev-token` mints tokens the running
 * gateway accepts. Default `.gw-dev.json` at the repository root; `GW_DEV_FILE` moves it (tests).
 * Mode 0600: the secret signs tokens for every tenant of the dev gateway.
 */
export const DEFAULT_DEV_FILE = fileURLToPath(new URL("../../../.gw-dev.json", import.meta.url));

/** The dev file: GW_DEV_FILE when set, else the default. */
export function devFilePath(configured: string | undefined): string {
  return configured || DEFAULT_DEV_FILE;
}

/** The secret kept in the dev file, or undefined when there is none (or it is unreadable). */
export function readDevSecret(path: string): string | undefined {
  let raw: string;
  try {
    raw = readFileSync(path, "utf8");
  } catch {
    return undefined;
  }
  try {
    const secret = (JSON.parse(raw) as { jwt_secret?: unknown }).jwt_secret;
    return typeof secret === "string" && secret.length >= 32 ? secret : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The kept secret, or a fresh one written to the file. `wx` creates the file only if absent, so two
 * gateways started at once from one checkout end up with the same secret, never two.
 */
export function loadOrCreateDevSecret(path: string): { secret: string; created: boolean } {
  const kept = readDevSecret(path);
  if (kept) {
    chmodSync(path, 0o600);
    return { secret: kept, created: false };
  }
  const secret = randomBytes(32).toString("base64url");
  const body = `${JSON.stringify({ jwt_secret: secret }, null, 2)}\n`;
  try {
    writeFileSync(path, body, { mode: 0o600, flag: "wx" });
    return { secret, created: true };
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== "EEXIST") throw e;
    // Another start won the race, or the file is there but unusable: take or replace it.
    const raced = readDevSecret(path);
    if (raced) return { secret: raced, created: false };
    writeFileSync(path, body, { mode: 0o600 });
    chmodSync(path, 0o600);
    return { secret, created: true };
  }
}
