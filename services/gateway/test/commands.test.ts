// Every command the project ships, run as a user runs it (`pnpm -s <command> --help`, the real
// scripts): `--help` prints the command's usage and exits 0, whatever the environment holds or
// lacks, and does nothing else.
import { execFile } from "node:child_process";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";

const REPO = fileURLToPath(new URL("../../../", import.meta.url));

/** This process's environment without any of the gateway's configuration. */
function bareEnv(): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (v !== undefined && !/^(GW_|DATABASE_URL$|REDIS_URL$|OTEL_)/.test(k)) env[k] = v;
  }
  return env;
}

describe("every command's --help", () => {
  it.each([
    // Nothing on stderr: not even the console build a start begins with.
    [["start", "--help"], "usage: pnpm start [--demo] [--help]"],
    [["demo", "--help"], "usage: pnpm start [--demo] [--help]"],
    [["dev-token", "--help"], "usage: pnpm dev-token --tenant T --sub U"],
    [["dev-token", "-h"], "usage: pnpm dev-token --tenant T --sub U"],
    [["migrate", "--help"], "usage: DATABASE_URL=postgres://… pnpm migrate"],
    [["receipt", "--help"], "usage: pnpm receipt verify <jws | ->"],
    [["receipt", "verify", "--help"], "usage: pnpm receipt verify <jws | ->"],
    [["gw-verify", "--help"], "usage: gw-verify <keygen | mint | verify | install>"],
    [["gw-verify", "verify", "--help"], "usage: gw-verify <keygen | mint | verify | install>"],
    [["--filter", "@gw/vault", "rotate-kek", "--help"], "usage: DATABASE_URL=… GW_KMS_KEY_OLD=…"],
  ])(
    "pnpm -s %j prints its usage and exits 0 without any configuration",
    async (args, usage) => {
      const { stdout, stderr } = await promisify(execFile)("pnpm", ["-s", ...args], {
        cwd: REPO,
        env: bareEnv(),
      });
      expect(stdout.startsWith(usage)).toBe(true);
      // More than the one line: what the command does.
      expect(stdout.trim().split("\n").length).toBeGreaterThan(2);
      expect(stderr).toBe("");
    },
    60_000,
  );
});
