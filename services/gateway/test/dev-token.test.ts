// `pnpm start` with no token configuration keeps its generated secret in a dev file that
// `pnpm token` reads: a token minted for any tenant and user works on the running gateway.
import { execFile } from "node:child_process";
import { once } from "node:events";
import { mkdtempSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { client } from "@gw/testkit";
import { describe, expect, it } from "vitest";
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
});
