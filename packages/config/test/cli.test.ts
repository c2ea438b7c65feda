import { randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import { ConfigError, loadCliEnv, MigrateEnvSchema, RotateKekEnvSchema } from "../src/index.ts";

const message = (f: () => unknown) => {
  try {
    f();
  } catch (e) {
    expect(e).toBeInstanceOf(ConfigError);
    return (e as Error).message;
  }
  throw new Error("no ConfigError");
};

describe("the operator CLIs' environments", () => {
  it("pnpm migrate needs DATABASE_URL; an empty value counts as unset", () => {
    expect(message(() => loadCliEnv(MigrateEnvSchema, {}))).toBe("DATABASE_URL is required");
    expect(message(() => loadCliEnv(MigrateEnvSchema, { DATABASE_URL: "" }))).toBe(
      "DATABASE_URL is required",
    );
    expect(loadCliEnv(MigrateEnvSchema, { DATABASE_URL: "postgres://u@h/db", PORT: "1" })).toEqual({
      DATABASE_URL: "postgres://u@h/db",
    });
  });

  it("rotate-kek names the first bad variable, in order, and never echoes a key", () => {
    const old = randomBytes(32).toString("base64");
    const next = randomBytes(32).toString("base64");
    expect(message(() => loadCliEnv(RotateKekEnvSchema, { GW_KMS_KEY_OLD: old, GW_KMS_KEY_NEW: next }))).toBe(
      "DATABASE_URL is required",
    );
    const short = randomBytes(16).toString("base64");
    const bad = message(() =>
      loadCliEnv(RotateKekEnvSchema, { DATABASE_URL: "u", GW_KMS_KEY_OLD: short, GW_KMS_KEY_NEW: next }),
    );
    expect(bad).toBe("GW_KMS_KEY_OLD must be set to a base64-encoded 32-byte key");
    expect(message(() => loadCliEnv(RotateKekEnvSchema, { DATABASE_URL: "u", GW_KMS_KEY_OLD: old }))).toBe(
      "GW_KMS_KEY_NEW must be set to a base64-encoded 32-byte key",
    );
    const env = loadCliEnv(RotateKekEnvSchema, {
      DATABASE_URL: "u",
      GW_KMS_KEY_OLD: old,
      GW_KMS_KEY_NEW: next,
    });
    expect(env.GW_KMS_KEY_OLD.equals(Buffer.from(old, "base64"))).toBe(true);
    expect(env.GW_KMS_KEY_NEW.length).toBe(32);
  });
});
