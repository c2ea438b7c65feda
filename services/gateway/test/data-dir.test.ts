// @stores once: spawns pnpm start on a data directory of its own, whatever the pass.
// `pnpm start` without DATABASE_URL keeps its data in GW_DATA_DIR (docs/operations.md, The embedded
// store on disk): stopped and started again, as a user would, it still has its agents and
// credentials, still accepts the token it printed, and a credential still opens and is injected
// into the upstream call. One gateway per directory: a second one stops with one line.
import { execFile, spawn } from "node:child_process";
import { once } from "node:events";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { client, startUpstream, testEnv } from "@gw/testkit";
import { afterAll, describe, expect, it } from "vitest";
import { DataDirBusy, LOCK_FILE, lockDataDir } from "../src/data-dir/lock.ts";
import { groupAlive, type PnpmRun, pnpmRun, TSX } from "./helpers.ts";

const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

function freshDir(): string {
  const parent = mkdtempSync(join(tmpdir(), "gw-data-"));
  dirs.push(parent);
  return join(parent, "data");
}

/** The token a start printed, once it has printed it. */
async function bannerToken(run: PnpmRun): Promise<{ token: string; base: string }> {
  // A first start on a directory creates the store and migrates it: tens of seconds on a loaded machine.
  await expect.poll(() => run.stderr(), { timeout: 180_000, interval: 200 }).toContain("export GW_TOKEN=");
  const port = /listening on http:\/\/localhost:(\d+)/.exec(run.stderr())?.[1];
  return {
    token: /export GW_TOKEN=(\S+)/.exec(run.stderr())?.[1] ?? "",
    base: `http://127.0.0.1:${port}`,
  };
}

/** Stops a start the way Ctrl-C does, and waits until every process of it is gone. */
async function stop(run: PnpmRun): Promise<void> {
  const pgid = run.child.pid as number;
  process.kill(-pgid, "SIGINT");
  await run.exited;
  await expect.poll(() => groupAlive(pgid), { timeout: 30_000, interval: 100 }).toBe(false);
}

describe("pnpm start on a data directory", () => {
  it("finds its agents and credentials again after a restart: the printed token works and the credential is injected", async () => {
    const dir = freshDir();
    const secret = "sk-kept-across-restarts-1234";
    const upstream = await startUpstream((_req, res) => {
      res.writeHead(200, { "content-type": "text/plain" }).end("ok");
    });
    // No store, key or token configuration: what `pnpm start` makes itself, it keeps in GW_DATA_DIR.
    const env = {
      PORT: "0",
      DATABASE_URL: undefined,
      GW_DATA_DIR: dir,
      GW_KMS_KEY: undefined,
      GW_DEV_JWT_SECRET: undefined,
    };
    const runs: PnpmRun[] = [];
    try {
      const first = pnpmRun("start", env);
      runs.push(first);
      const { token, base } = await bannerToken(first);
      // The migrations ran on the store on disk, which sits with the kept secrets, each 0600.
      expect(first.stdout()).toContain('"msg":"migrations applied"');
      expect(first.stderr()).toContain(`(store: embedded, on disk in ${dir})`);
      expect(statSync(dir).mode & 0o777).toBe(0o700);
      for (const file of ["kms.key", "dev-jwt.secret"])
        expect(statSync(join(dir, file)).mode & 0o777).toBe(0o600);
      expect(existsSync(join(dir, "postgres", "PG_VERSION"))).toBe(true);
      const call = client(base, token);
      const caps = await call("GET", "/v1/capabilities");
      // Durable, and where; the key is kept, not configured by the operator.
      expect(caps.json.posture).toMatchObject({
        store: "postgres",
        data_dir: dir,
        kms_key_configured: false,
      });

      // A second gateway on the same directory (on another port) stops at once, saying why.
      const second = pnpmRun("start", env);
      runs.push(second);
      expect(await second.exited).toBe(2);
      expect(
        second
          .stderr()
          .split("\n")
          .filter((l) => l.includes("GW_DATA_DIR")),
      ).toEqual([
        `GW_DATA_DIR ${dir} is in use by another gateway (pid ${readFileSync(join(dir, "gateway.pid"), "utf8").trim()}); stop that one, or set GW_DATA_DIR to another directory`,
      ]);
      expect(second.stdout()).not.toContain("listening");

      const cred = await call("POST", "/v1/credentials", { name: "kept", kind: "api_key", secret });
      expect(cred.status).toBe(201);
      const agent = await call("POST", "/v1/agents", {
        name: "kept",
        upstream_url: upstream.url,
        credential_ref: cred.json.id,
      });
      expect(agent.status).toBe(201);
      expect((await call("POST", `/v1/proxy/${agent.json.id}/stream`, "before")).status).toBe(200);
      expect(upstream.received.at(-1)?.headers["x-api-key"]).toBe(secret);
      await stop(first);
      expect(first.stdout()).toContain("shutdown complete");
      expect(existsSync(join(dir, "gateway.pid"))).toBe(false);

      const again = pnpmRun("start", env);
      runs.push(again);
      const restarted = await bannerToken(again);
      // Nothing left to migrate.
      expect(again.stdout()).not.toContain("migrations applied");
      // The token the first start printed, on the second.
      const same = client(restarted.base, token);
      const agents = await same("GET", "/v1/agents");
      expect(agents.status).toBe(200);
      expect(agents.json.data.map((a: { id: string }) => a.id)).toEqual([agent.json.id]);
      const creds = await same("GET", "/v1/credentials");
      expect(creds.json.data.map((c: { id: string }) => c.id)).toEqual([cred.json.id]);
      expect(creds.text).not.toContain(secret);
      // The credential opens under the kept key and reaches the upstream.
      const after = await same("POST", `/v1/proxy/${agent.json.id}/stream`, "after");
      expect(after.status).toBe(200);
      expect(upstream.received.at(-1)?.body.toString()).toBe("after");
      expect(upstream.received.at(-1)?.headers["x-api-key"]).toBe(secret);
      await stop(again);
    } finally {
      for (const run of runs)
        if (groupAlive(run.child.pid as number)) process.kill(-(run.child.pid as number), "SIGKILL");
      await upstream.close();
    }
  }, 600_000); // three starts of the real command, one of them creating the store
});

describe("a damaged data directory", () => {
  it("stops the start with one line naming the file, and never replaces the key", async () => {
    const dir = freshDir();
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, "kms.key"), "not a key\n", { mode: 0o600 });
    const env: Record<string, string> = {};
    for (const [k, v] of Object.entries({
      ...process.env,
      ...testEnv({ PORT: "0", DATABASE_URL: undefined, GW_DATA_DIR: dir, GW_KMS_KEY: undefined }),
    })) {
      if (v !== undefined) env[k] = v;
    }
    const main = fileURLToPath(new URL("../src/main.ts", import.meta.url));
    const run = promisify(execFile)(process.execPath, ["--import", TSX, main], { env });
    await expect(run).rejects.toMatchObject({
      code: 1,
      stderr: `GW_DATA_DIR: ${join(dir, "kms.key")} does not hold a base64 32-byte key; restore it (credentials sealed under it do not open without it)\n`,
    });
    expect(readFileSync(join(dir, "kms.key"), "utf8")).toBe("not a key\n");
    // It let go of the directory on its way out.
    expect(existsSync(join(dir, LOCK_FILE))).toBe(false);
  }, 120_000);
});

describe("the data directory's lock", () => {
  /** The pid of a process that has ended. */
  async function deadPid(): Promise<number> {
    const child = spawn(process.execPath, ["-e", ""]);
    await once(child, "exit");
    return child.pid as number;
  }

  it("is refused while its holder lives, naming it, and taken over once the holder is gone", async () => {
    const dir = mkdtempSync(join(tmpdir(), "gw-lock-"));
    dirs.push(dir);
    const holder = spawn(process.execPath, ["-e", "setTimeout(() => {}, 60_000)"]);
    try {
      writeFileSync(join(dir, LOCK_FILE), `${holder.pid}\n`);
      await expect(lockDataDir(dir)).rejects.toEqual(new DataDirBusy(holder.pid as number));
      expect(readFileSync(join(dir, LOCK_FILE), "utf8")).toBe(`${holder.pid}\n`);
    } finally {
      holder.kill("SIGKILL");
      await once(holder, "exit");
    }
    // Killed outright, it never removed its file: the next one takes the directory.
    await lockDataDir(dir);
    expect(readFileSync(join(dir, LOCK_FILE), "utf8")).toBe(`${process.pid}\n`);
  });

  it("takes over a file naming a pid that has ended, or holding no pid", async () => {
    for (const body of [`${await deadPid()}\n`, "", "not a pid\n"]) {
      const dir = mkdtempSync(join(tmpdir(), "gw-lock-"));
      dirs.push(dir);
      writeFileSync(join(dir, LOCK_FILE), body);
      await lockDataDir(dir);
      expect(readFileSync(join(dir, LOCK_FILE), "utf8")).toBe(`${process.pid}\n`);
    }
  });
});
