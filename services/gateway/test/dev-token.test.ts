// `pnpm start` with no token configuration keeps its generated secret in a dev file that
// `pnpm token` reads: a token minted for any tenant and user works on the running gateway.
import { execFile } from "node:child_process";
import { once } from "node:events";
import { existsSync, mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { client } from "@gw/testkit";
import { describe, expect, it } from "vitest";
import { DEFAULT_DEV_FILE } from "../src/dev-file.ts";
import { spawnGateway } from "./helpers.ts";

const REPO = fileURLToPath(new URL("../../../", import.meta.url));

/** `pnpm token`'s own entry point, run as its own process with the environment given. */
async function pnpmToken(env: Record<string, string>, args: string[]): Promise<string> {
  const { GW_DEV_JWT_SECRET: _ignored, ...rest } = process.env;
  const { stdout } = await promisify(execFile)(
    process.execPath,
    ["--import", "tsx", "services/gateway/src/token.ts", ...args],
    { cwd: REPO, env: { ...rest, ...env } },
  );
  return stdout.trim();
}

describe("dev secret kept for pnpm token", () => {
  it("mints, from the file pnpm start wrote, a token for another tenant and sub that the gateway accepts", async () => {
    const devFile = join(mkdtempSync(join(tmpdir(), "gw-dev-")), ".gw-dev.json");
    // No token configuration at all: the gateway generates the secret and keeps it.
    const gw = await spawnGateway({ GW_DEV_JWT_SECRET: undefined, GW_DEV_FILE: devFile });
    let jwt: string;
    try {
      expect(statSync(devFile).mode & 0o777).toBe(0o600);
      jwt = await pnpmToken({ GW_DEV_FILE: devFile }, [
        "--tenant",
        "acme-2",
        "--sub",
        "alice",
        "--scope",
        "invocations:read_body",
      ]);
      const payload = JSON.parse(Buffer.from(jwt.split(".")[1] ?? "", "base64url").toString());
      expect(payload.exp).toBeGreaterThan(Date.now() / 1000);
      const me = await client(gw.url, jwt)("GET", "/v1/me");
      expect(me.status).toBe(200);
      expect(me.json).toMatchObject({
        tenant_id: "acme-2",
        user_id: "alice",
        can_read_invocation_bodies: true,
      });
    } finally {
      gw.child.kill("SIGTERM");
      await once(gw.child, "exit");
    }
    // The next start reuses the kept secret: the same token still works.
    const again = await spawnGateway({ GW_DEV_JWT_SECRET: undefined, GW_DEV_FILE: devFile });
    try {
      const me = await client(again.url, jwt)("GET", "/v1/me");
      expect(me.status).toBe(200);
      expect(me.json.user_id).toBe("alice");
    } finally {
      again.child.kill("SIGTERM");
      await once(again.child, "exit");
    }
  }, 120_000); // two process starts; on the embedded store each runs the migrations

  it("refuses a ttl that would not give the token a future exp", async () => {
    const devFile = join(mkdtempSync(join(tmpdir(), "gw-dev-")), "none.json");
    const run = pnpmToken({ GW_DEV_JWT_SECRET: "x".repeat(40), GW_DEV_FILE: devFile }, [
      "--tenant",
      "t",
      "--sub",
      "u",
      "--ttl",
      "0",
    ]);
    await expect(run).rejects.toMatchObject({ code: 2 });
    // No secret anywhere: a clear message, not a token nobody accepts.
    await expect(pnpmToken({ GW_DEV_FILE: devFile }, ["--tenant", "t", "--sub", "u"])).rejects.toMatchObject({
      code: 2,
      stderr: expect.stringContaining("no dev secret"),
    });
  });

  it("by default the secret is kept in a git-ignored file at the repository root, the one `pnpm token` reads", async () => {
    const run = promisify(execFile);
    expect(DEFAULT_DEV_FILE).toBe(join(REPO, ".gw-dev.json"));
    // Ignored by git (check-ignore exits 1 for a path that is not, or that is tracked: the call rejects).
    const ignored = await run("git", ["check-ignore", "--verbose", DEFAULT_DEV_FILE], {
      cwd: REPO,
    });
    expect(ignored.stdout).toContain(".gw-dev.json");
    // The file a developer may already have is used, never replaced; one made here is removed.
    const made = !existsSync(DEFAULT_DEV_FILE);
    // No token configuration and no GW_DEV_FILE: the gateway keeps its secret at the default path.
    const gw = await spawnGateway({ GW_DEV_JWT_SECRET: undefined, GW_DEV_FILE: undefined });
    try {
      expect(existsSync(DEFAULT_DEV_FILE)).toBe(true);
      // Never shown as a change to commit.
      const status = await run("git", ["status", "--porcelain", "--untracked-files=all"], { cwd: REPO });
      expect(status.stdout).not.toContain(".gw-dev.json");
      // `pnpm token` as a user runs it, with neither GW_DEV_JWT_SECRET nor GW_DEV_FILE.
      const { GW_DEV_JWT_SECRET: _secret, GW_DEV_FILE: _file, ...env } = process.env;
      const { stdout } = await run("pnpm", ["--silent", "token", "--tenant", "acme-3", "--sub", "bob"], {
        cwd: REPO,
        env,
      });
      const me = await client(gw.url, stdout.trim())("GET", "/v1/me");
      expect(me.status).toBe(200);
      expect(me.json).toMatchObject({ tenant_id: "acme-3", user_id: "bob" });
    } finally {
      gw.child.kill("SIGTERM");
      await once(gw.child, "exit");
      if (made) rmSync(DEFAULT_DEV_FILE, { force: true });
    }
  }, 120_000);
});
