import * as v from "valibot";
import { ConfigError, processEnv } from "./config.ts";

const requiredUrl = v.pipe(v.string("is required"), v.minLength(1, "is required"));
const kek = v.pipe(
  v.string("must be set to a base64-encoded 32-byte key"),
  v.check((s) => Buffer.from(s, "base64").length === 32, "must be set to a base64-encoded 32-byte key"),
  v.transform((s) => Buffer.from(s, "base64")),
);

/** `pnpm migrate` (packages/db/src/migrate-cli.ts). */
export const MigrateEnvSchema = v.object({
  /** The Postgres database to migrate. */
  DATABASE_URL: requiredUrl,
});

/** `pnpm --filter @gw/vault rotate-kek` (packages/vault/src/rotate-kek-cli.ts, docs/credentials.md). */
export const RotateKekEnvSchema = v.object({
  /** The Postgres database whose credentials are re-wrapped. */
  DATABASE_URL: requiredUrl,
  /** The key the data keys are wrapped with now (base64, 32 bytes). Never printed. */
  GW_KMS_KEY_OLD: kek,
  /** The key to wrap them with (base64, 32 bytes). Never printed. */
  GW_KMS_KEY_NEW: kek,
});

/**
 * Parses a CLI's environment against its schema; throws ConfigError naming the first bad variable
 * (`DATABASE_URL is required`). An empty value counts as unset. Messages never echo a value.
 */
export function loadCliEnv<S extends v.ObjectSchema<v.ObjectEntries, undefined>>(
  schema: S,
  env: Record<string, string | undefined> = processEnv(),
): v.InferOutput<S> {
  // Every key present (unset as undefined), so a missing one fails with its own entry's message.
  const source: Record<string, string | undefined> = {};
  for (const key of Object.keys(schema.entries)) {
    const value = env[key];
    source[key] = value === "" ? undefined : value;
  }
  const result = v.safeParse(schema, source, { abortPipeEarly: true });
  if (!result.success) {
    const issue = result.issues[0];
    throw new ConfigError(`${String(issue.path?.[0]?.key ?? "environment")} ${issue.message}`);
  }
  return result.output;
}
