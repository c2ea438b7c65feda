// @stores once: the dev secret file and token scopes.
// `pnpm start` with no token configuration keeps its generated secret in its data directory
// (GW_DATA_DIR), where `pnpm dev-token` reads it: a token minted for any tenant and user works on the
// running gateway, and on the next start. The token the start banner prints is the operator's: it
// holds every scope the gateway checks.
import { execFile } from "node:child_process";
import { once } from "node:events";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { client } from "@gw/testkit";
import { afterAll, describe, expect, it } from "vitest";
import { DEFAULT_DATA_DIR } from "../src/data-dir/index.ts";
import { OPERATOR_SCOPES } from "../src/dev.ts";
import { spawnGateway, TSX } from "./helpers.ts";

const REPO = fileURLToPath(new URL("../../../", import.meta.url));
const TOKEN_ENTRY = fileURLToPath(new URL("../src/token.ts", import.meta.url));
const USAGE = "usage: pnpm dev-token --tenant T --sub U [--scope S ...] [--ttl SECONDS]";

const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

function freshDir(): string {
  const dir = mkdtempSync(join(tmpdir(), "gw-dev-"));
  dirs.push(dir);
  return dir;
}

/** This process's environment without the token and data settings a test must give itself. */
function bareEnv(): Record<string, string | undefined> {
  const { GW_DEV_JWT_SECRET: _secret, GW_DATA_DIR: _dir, ...rest } = process.env;
  return rest;
}

/** `pnpm dev-token`'s own entry point, run as its own process with the environment given. */
async function pnpmToken(env: Record<string, string>, args: string[], cwd = REPO): Promise<string> {
  const { stdout } = await promisify(execFile)(process.execPath, ["--import", TSX, TOKEN_ENTRY, ...args], {
    cwd,
    env: { ...bareEnv(), ...env },
  });
  return stdout.trim();
}

describe("dev secret kept for pnpm dev-token", () => {
  it("mints, from the secret pnpm start keeps in its data directory, a token for another tenant and sub that the gateway accepts, now and after a restart", async () => {
    const dataDir = join(freshDir(), "data");
    // No token configuration at all: the gateway generates the secret and keeps it.
    const gw = await spawnGateway({ GW_DEV_JWT_SECRET: undefined, GW_DATA_DIR: dataDir });
    let jwt: string;
    try {
      expect(statSync(join(dataDir, "dev-jwt.secret")).mode & 0o777).toBe(0o600);
      // The banner's token is the operator's: captured bodies and deciding approvals (the
      // console's screens) work with it; past the scope check an unknown approval is a 404.
      await expect.poll(() => gw.stderr(), { timeout: 30_000 }).toContain("export GW_TOKEN=");
      // PORT=0: the banner names the port the system chose, not 0.
      expect(gw.stderr()).toContain(`listening on http://localhost:${new URL(gw.url).port} `);
      const operator = client(gw.url, /export GW_TOKEN=(\S+)/.exec(gw.stderr())?.[1]);
      const whoami = await operator("GET", "/v1/me");
      expect(whoami.json).toMatchObject({ tenant_id: "dev", can_read_invocation_bodies: true });
      expect([...whoami.json.scopes].sort()).toEqual([...OPERATOR_SCOPES].sort());
      expect((await operator("POST", "/v1/approvals/apr_unknown/approve", {})).status).toBe(404);
      // ... and the banner says how to mint a narrower one: the command as printed, run in a
      // shell of its own (no GW_DATA_DIR in it), reads this gateway's directory.
      const printed =
        /^ {4}(GW_DATA_DIR=\S+ pnpm -s dev-token) --tenant T --sub U \[--scope S \.\.\.\]/m.exec(
          gw.stderr(),
        )?.[1];
      expect(printed).toBe(`GW_DATA_DIR=${dataDir} pnpm -s dev-token`);
      const minted = await promisify(execFile)(
        "sh",
        ["-c", `${printed} --tenant acme-2 --sub alice --scope invocations:read_body`],
        { cwd: REPO, env: bareEnv() },
      );
      jwt = minted.stdout.trim();
      const payload = JSON.parse(Buffer.from(jwt.split(".")[1] ?? "", "base64url").toString());
      expect(payload.exp).toBeGreaterThan(Date.now() / 1000);
      const me = await client(gw.url, jwt)("GET", "/v1/me");
      expect(me.status).toBe(200);
      expect(me.json).toMatchObject({
        tenant_id: "acme-2",
        user_id: "alice",
        can_read_invocation_bodies: true,
      });
      // Only the scopes asked for: this one may not decide approvals.
      const decide = await client(gw.url, jwt)("POST", "/v1/approvals/apr_unknown/approve", {});
      expect(decide.status).toBe(403);
    } finally {
      gw.child.kill("SIGTERM");
      await once(gw.child, "exit");
    }
    // The next start reuses the kept secret: the same token still works.
    const again = await spawnGateway({ GW_DEV_JWT_SECRET: undefined, GW_DATA_DIR: dataDir });
    try {
      const me = await client(again.url, jwt)("GET", "/v1/me");
      expect(me.status).toBe(200);
      expect(me.json.user_id).toBe("alice");
    } finally {
      again.child.kill("SIGTERM");
      await once(again.child, "exit");
    }
  }, 400_000); // two process starts; on the embedded store the first creates it and migrates

  it("refuses a ttl that would not give the token a future exp, and says where a secret would be", async () => {
    const dataDir = join(freshDir(), "data");
    const run = pnpmToken({ GW_DEV_JWT_SECRET: "x".repeat(40), GW_DATA_DIR: dataDir }, [
      "--tenant",
      "t",
      "--sub",
      "u",
      "--ttl",
      "0",
    ]);
    await expect(run).rejects.toMatchObject({ code: 2 });
    // No secret anywhere: a clear message, not a token nobody accepts.
    await expect(pnpmToken({ GW_DATA_DIR: dataDir }, ["--tenant", "t", "--sub", "u"])).rejects.toMatchObject({
      code: 2,
      stderr: expect.stringContaining(`no dev secret in ${dataDir}: start the gateway first (pnpm start)`),
    });
    // A gateway on the memory store keeps none: only GW_DEV_JWT_SECRET can say it.
    await expect(pnpmToken({ GW_DATA_DIR: "memory" }, ["--tenant", "t", "--sub", "u"])).rejects.toMatchObject(
      {
        code: 2,
        stderr:
          "GW_DATA_DIR=memory keeps no dev secret: set GW_DEV_JWT_SECRET to the one the gateway runs with\n",
      },
    );
  });

  it("--help prints the usage and exits 0; an unknown option or a missing value is one usage line and exit 2", async () => {
    const env = { GW_DEV_JWT_SECRET: "x".repeat(40) };
    // As a user runs it: pnpm hands --help to the script (pnpm's own `token` would not be ours).
    const help = await promisify(execFile)("pnpm", ["--silent", "dev-token", "--help"], {
      cwd: REPO,
      env: { ...bareEnv(), ...env },
    });
    expect(help.stdout).toContain(USAGE);
    expect(help.stdout).toContain("--scope S");
    for (const [args, reason] of [
      [["--tenant", "t", "--sub", "u", "--scopes", "a"], "unknown option --scopes"],
      [["--tenant", "t", "--sub"], "--sub needs a value"],
      [["--tenant", "--sub", "u"], "--tenant needs a value (one that begins with a dash: --tenant=-…)"],
      [["--sub", "u"], "--tenant is required"],
      [["--tenant", "t", "--sub", "u", "extra"], "unexpected argument 'extra'"],
    ] as const) {
      const run = pnpmToken(env, [...args]);
      await expect(run).rejects.toMatchObject({ code: 2, stderr: `${reason}; ${USAGE}\n`, stdout: "" });
    }
  });

  it("by default keeps the secret in .gateway/data under the working directory, which git ignores, and dev-token reads it there", async () => {
    const run = promisify(execFile);
    expect(DEFAULT_DATA_DIR).toBe(".gateway/data");
    // In the repository, where `pnpm start` runs: ignored by git (check-ignore exits 1 for a path
    // that is not, or that is tracked: the call rejects).
    const ignored = await run(
      "git",
      ["check-ignore", "--verbose", join(REPO, DEFAULT_DATA_DIR, "dev-jwt.secret")],
      {
        cwd: REPO,
      },
    );
    expect(ignored.stdout).toContain(".gateway/");
    // Started elsewhere, so that this test never writes into the repository (or takes a
    // developer's own directory): the same default, under that working directory.
    const cwd = freshDir();
    const gw = await spawnGateway({ GW_DEV_JWT_SECRET: undefined, GW_DATA_DIR: undefined }, [], { cwd });
    try {
      expect(existsSync(join(cwd, DEFAULT_DATA_DIR, "dev-jwt.secret"))).toBe(true);
      // `pnpm dev-token` there, with neither GW_DEV_JWT_SECRET nor GW_DATA_DIR.
      const minted = await pnpmToken({}, ["--tenant", "acme-3", "--sub", "bob"], cwd);
      const me = await client(gw.url, minted)("GET", "/v1/me");
      expect(me.status).toBe(200);
      expect(me.json).toMatchObject({ tenant_id: "acme-3", user_id: "bob" });
    } finally {
      gw.child.kill("SIGTERM");
      await once(gw.child, "exit");
    }
  }, 400_000);
});

describe("the operator's scopes", () => {
  it("are every scope the code checks (a new scope constant belongs in OPERATOR_SCOPES)", () => {
    const checked = new Set<string>();
    const walk = (dir: string) => {
      for (const entry of readdirSync(dir, { withFileTypes: true })) {
        if (entry.name === "node_modules" || entry.name === "dist") continue;
        const path = join(dir, entry.name);
        if (entry.isDirectory()) walk(path);
        else if (/\.tsx?$/.test(entry.name) && path.includes("/src/")) {
          const text = readFileSync(path, "utf8");
          for (const m of text.matchAll(/_SCOPE\s*=\s*"([a-z_]+:[a-z_]+)"/g)) checked.add(m[1] ?? "");
        }
      }
    };
    for (const top of ["packages", "services"]) walk(join(REPO, top));
    expect(checked.size).toBeGreaterThanOrEqual(2);
    expect([...checked].sort()).toEqual([...OPERATOR_SCOPES].sort());
  });
});
