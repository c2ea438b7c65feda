import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { chownSync, createWriteStream, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { fileURLToPath } from "node:url";

export const ROOT = fileURLToPath(new URL("../../", import.meta.url));

/** A free local port (bound, read, released). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once("error", reject);
    s.listen(0, "127.0.0.1", () => {
      const addr = s.address();
      const port = typeof addr === "object" && addr ? addr.port : 0;
      s.close(() => resolve(port));
    });
  });
}

/** Postgres refuses to run as root: under root (CI) every Postgres program runs as `postgres`. */
function asPostgres(cmd: string, args: string[]): [string, string[]] {
  if (process.getuid?.() !== 0) return [cmd, args];
  return ["runuser", ["-u", "postgres", "--", cmd, ...args]];
}

function pgBin(): string {
  const base = "/usr/lib/postgresql";
  const versions = readdirSync(base).sort((a, b) => Number(b) - Number(a));
  const v = versions[0];
  if (!v) throw new Error("no Postgres under /usr/lib/postgresql");
  return join(base, v, "bin");
}

export type PrivatePostgres = {
  url: string;
  /** Stops it: `fast` (clients disconnected, clean) or `immediate` (a crash). */
  stop: (mode?: "fast" | "immediate") => void;
  start: () => void;
  destroy: () => void;
};

/** A private Postgres cluster (initdb in a temp dir, a free port, trust auth, no fsync). */
export async function startPostgres(): Promise<PrivatePostgres> {
  const bin = pgBin();
  const dir = mkdtempSync(join(tmpdir(), "gw-faults-pg-"));
  const data = join(dir, "data");
  if (process.getuid?.() === 0) {
    const uid = Number(execFileSync("id", ["-u", "postgres"]).toString().trim());
    const gid = Number(execFileSync("id", ["-g", "postgres"]).toString().trim());
    chownSync(dir, uid, gid);
  }
  const port = await freePort();
  const run = (cmd: string, args: string[]) => {
    const [c, a] = asPostgres(join(bin, cmd), args);
    execFileSync(c, a, { stdio: ["ignore", "ignore", "pipe"], cwd: dir });
  };
  run("initdb", ["-D", data, "-U", "postgres", "--auth=trust", "-E", "UTF8", "--no-sync"]);
  const opts = `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=400`;
  const start = () => run("pg_ctl", ["-D", data, "-l", join(dir, "log"), "-w", "-o", opts, "start"]);
  const stop = (mode: "fast" | "immediate" = "fast") => run("pg_ctl", ["-D", data, "-m", mode, "-w", "stop"]);
  start();
  return {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    start,
    stop,
    destroy: () => {
      try {
        stop("immediate");
      } catch {
        // already stopped
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

export type PrivateRedis = { url: string; stop: () => Promise<void>; start: () => Promise<void> };

/** A private Redis without persistence: stopping it loses every job (a stop is also a flush). */
export async function startRedis(): Promise<PrivateRedis> {
  const port = await freePort();
  let child: ChildProcess | undefined;
  const start = async () => {
    child = spawn(
      "redis-server",
      ["--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"],
      {
        stdio: "ignore",
      },
    );
    for (let i = 0; i < 100; i++) {
      if (await portOpen(port)) return;
      await sleep(50);
    }
    throw new Error("redis did not start");
  };
  const stop = async () => {
    const c = child;
    if (!c || c.exitCode !== null) return;
    const gone = new Promise((r) => c.once("exit", r));
    c.kill("SIGKILL");
    await gone;
  };
  await start();
  return { url: `redis://127.0.0.1:${port}`, start, stop };
}

function portOpen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = createServer();
    s.once("error", () => resolve(true));
    s.listen(port, "127.0.0.1", () => s.close(() => resolve(false)));
  });
}

export type Service = {
  name: string;
  url: string;
  child: ChildProcess;
  /** Its V8 inspector's port on 127.0.0.1, when started with `{ inspect: true }` (heap stats, snapshots). */
  inspectPort?: number;
  /** Starts it again on the same port (after a kill or a stop). */
  restart: () => Promise<void>;
  kill: (signal: NodeJS.Signals) => Promise<number | null>;
};

/**
 * A service of the split deployment as a real process (`tsx services/<name>/src/main.ts`).
 * `inspect`: started with its V8 inspector on a free local port (the soak reads its heap there).
 */
export async function spawnService(
  name: "control-plane" | "proxy" | "worker",
  env: Record<string, string>,
  logDir: string,
  opts: { inspect?: boolean } = {},
): Promise<Service> {
  const port = await freePort();
  const inspectPort = opts.inspect ? await freePort() : undefined;
  const nodeArgs = inspectPort ? [`--inspect=127.0.0.1:${inspectPort}`] : [];
  const log = createWriteStream(join(logDir, `${name}.log`), { flags: "a" });
  const svc: Service = {
    name,
    url: `http://127.0.0.1:${port}`,
    child: undefined as unknown as ChildProcess,
    ...(inspectPort ? { inspectPort } : {}),
    restart: async () => {
      const child = spawn(
        process.execPath,
        [...nodeArgs, "--import", "tsx", `services/${name}/src/main.ts`],
        {
          cwd: ROOT,
          env: { PATH: process.env.PATH ?? "", ...env, PORT: String(port) },
          stdio: ["ignore", "pipe", "pipe"],
        },
      );
      child.stdout?.pipe(log, { end: false });
      child.stderr?.pipe(log, { end: false });
      svc.child = child;
      let exited = false;
      child.once("exit", () => {
        exited = true;
      });
      for (let i = 0; i < 600; i++) {
        if (exited) throw new Error(`${name} exited during start-up (see ${logDir}/${name}.log)`);
        try {
          if ((await fetch(`${svc.url}/healthz`)).status === 200) return;
        } catch {
          // not listening yet
        }
        await sleep(100);
      }
      throw new Error(`${name} did not become healthy`);
    },
    kill: async (signal) => {
      const c = svc.child;
      if (c.exitCode !== null || c.signalCode !== null) return c.exitCode;
      const gone = new Promise<number | null>((r) => c.once("exit", (code) => r(code)));
      c.kill(signal);
      return gone;
    },
  };
  await svc.restart();
  return svc;
}

/** One row of the fault table. */
export type FaultRow = {
  fault: string;
  calls: number;
  lost: number;
  stuck: number;
  repeated: number;
  /** Upstream calls made for a call whose caller got an error (never allowed). */
  ranAfterError: number;
  errors: number;
  recoverMs: number;
  note?: string;
};

export function printTable(rows: FaultRow[]): string {
  const head =
    "| fault | calls | lost | stuck | repeated | ran after error | errors | time to recover | note |";
  const sep = "|---|---:|---:|---:|---:|---:|---:|---:|---|";
  const lines = rows.map(
    (r) =>
      `| ${r.fault} | ${r.calls} | ${r.lost} | ${r.stuck} | ${r.repeated} | ${r.ranAfterError} | ${r.errors} | ${(r.recoverMs / 1000).toFixed(1)} s | ${r.note ?? ""} |`,
  );
  return [head, sep, ...lines].join("\n");
}
