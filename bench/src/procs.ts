import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { createServer } from "node:net";
import { setTimeout as sleep } from "node:timers/promises";
import { fileURLToPath } from "node:url";

export const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const children = new Set<ChildProcess>();

/** A child process that prints `{"port": n}` when it listens (the upstream, the bare proxy). */
export async function spawnHelper(
  script: string,
  args: string[] = [],
  nodeArgs: string[] = [],
): Promise<{ child: ChildProcess; port: number }> {
  const child = spawn(
    process.execPath,
    [...nodeArgs, "--import", "tsx", fileURLToPath(new URL(script, import.meta.url)), ...args],
    {
      stdio: ["ignore", "pipe", "inherit"],
      cwd: ROOT,
    },
  );
  children.add(child);
  const port = await new Promise<number>((resolve, reject) => {
    let buf = "";
    child.stdout?.on("data", (d: Buffer) => {
      buf += d.toString();
      const line = buf.split("\n")[0];
      if (buf.includes("\n") && line) resolve((JSON.parse(line) as { port: number }).port);
    });
    child.once("exit", (code) => reject(new Error(`${script} exited (${code}) before listening`)));
  });
  return { child, port };
}

/** A built service: `node services/<name>/dist/main.js` with `env`; resolves once /healthz is 200. */
export async function spawnService(
  name: string,
  env: Record<string, string>,
  nodeArgs: string[] = [],
): Promise<ChildProcess> {
  const child = spawn(process.execPath, [...nodeArgs, `services/${name}/dist/main.js`], {
    stdio: ["ignore", "inherit", "inherit"],
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? "", ...env },
  });
  children.add(child);
  let exited: number | null | undefined;
  child.once("exit", (code) => {
    exited = code;
  });
  const url = `http://127.0.0.1:${env.PORT}/healthz`;
  for (let i = 0; i < 300; i++) {
    if (exited !== undefined) throw new Error(`${name} exited (${exited}) during start-up`);
    try {
      const res = await fetch(url);
      if (res.status === 200) return child;
    } catch {
      // not listening yet
    }
    await sleep(100);
  }
  throw new Error(`${name} did not become healthy`);
}

/** Stops a child with SIGTERM (graceful: the CPU profile is written on exit) and waits for it. */
export async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const gone = new Promise<void>((r) => child.once("exit", () => r()));
  child.kill("SIGTERM");
  const timer = setTimeout(() => child.kill("SIGKILL"), 15_000);
  await gone;
  clearTimeout(timer);
  children.delete(child);
}

export async function stopAll(): Promise<void> {
  await Promise.all([...children].map((c) => stop(c)));
}

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

let clockTicks: number | undefined;
/**
 * CPU time a process and the node processes it started (GW_PROXY_PROCESSES) have used so far (user +
 * system, /proc/<pid>/stat fields 14 and 15), ms. The
 * difference over a load step divided by the calls served is the process's CPU per call, steadier
 * than throughput on a shared machine.
 */
export function cpuMsOf(pid: number): number {
  return ownCpuMsOf(pid) + nodeChildrenOf(pid).reduce((sum, child) => sum + ownCpuMsOf(child), 0);
}

function ownCpuMsOf(pid: number): number {
  clockTicks ??= Number(execFileSync("getconf", ["CLK_TCK"], { encoding: "utf8" }).trim()) || 100;
  // The command name (field 2) may hold spaces; fields are counted after its closing parenthesis.
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return ((Number(f[11]) + Number(f[12])) * 1000) / clockTicks;
}

/**
 * The node processes `pid` started (the proxy processes of GW_PROXY_PROCESSES, whose CPU is the
 * proxy's too); none for a single process.
 */
export function nodeChildrenOf(pid: number): number[] {
  const out: number[] = [];
  for (const p of readdirSync("/proc")) {
    if (!/^\d+$/.test(p)) continue;
    try {
      const stat = readFileSync(`/proc/${p}/stat`, "utf8");
      const comm = stat.slice(stat.indexOf("(") + 1, stat.lastIndexOf(")"));
      if (comm.startsWith("node") && Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]) === pid) {
        out.push(Number(p));
      }
    } catch {
      // the process ended meanwhile
    }
  }
  return out;
}

/** Who shares the machine during a step, by role: our services, the stores, the upstream. */
const ROLES: Array<[role: string, test: (comm: string, cmdline: () => string) => boolean]> = [
  ["proxy", (c, cmd) => c.startsWith("node") && cmd().includes("services/proxy/dist")],
  ["worker", (c, cmd) => c.startsWith("node") && cmd().includes("services/worker/dist")],
  ["upstream", (c, cmd) => c.startsWith("node") && cmd().includes("bench/src/upstream.ts")],
  ["Postgres", (c) => c.startsWith("postgres")],
  ["Redis", (c) => c.startsWith("redis-server")],
];

/**
 * CPU time used so far by every process of each role in ROLES (ms; processes that exited are not
 * counted). `postgres`: only these server processes count as Postgres (the backends of the run's
 * database), not those of other databases on a shared server.
 */
export function cpuMsByRole(roles = ROLES, postgres?: Set<number>): Map<string, number> {
  const byRole = new Map<string, number>(roles.map(([r]) => [r, 0]));
  for (const pid of readdirSync("/proc")) {
    if (!/^\d+$/.test(pid)) continue;
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
      const comm = stat.slice(stat.indexOf("(") + 1, stat.lastIndexOf(")"));
      if (postgres && comm.startsWith("postgres") && !postgres.has(Number(pid))) continue;
      const role = roles.find(([, test]) => test(comm, () => readFileSync(`/proc/${pid}/cmdline`, "utf8")));
      if (role) byRole.set(role[0], (byRole.get(role[0]) ?? 0) + ownCpuMsOf(Number(pid)));
    } catch {
      // the process ended meanwhile
    }
  }
  return byRole;
}

/** Everything a latency step shares the machine with: the roles and the bare proxy. */
const EVERYONE: typeof ROLES = [
  ...ROLES,
  ["bare proxy", (c, cmd) => c.startsWith("node") && cmd().includes("bench/src/bare-proxy.ts")],
];

/**
 * Waits until the machine is quiet: every process of the run together used under 5 % of a core
 * over the last 250 ms (at most `withinMs`). A latency step that starts right after a load step
 * would otherwise measure that step's aftermath: its records still being written, its garbage
 * still being collected. Returns how long it waited (ms).
 */
export async function quiet(withinMs = 30_000): Promise<number> {
  const start = performance.now();
  const total = () => [...cpuMsByRole(EVERYONE).values()].reduce((a, b) => a + b, 0);
  let before = total();
  while (performance.now() - start < withinMs) {
    await new Promise((r) => setTimeout(r, 250));
    const now = total();
    if (now - before < 12.5) break;
    before = now;
  }
  return performance.now() - start;
}

/** Resident set size of a process now (VmRSS), bytes. */
export function rssOf(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  const m = /VmRSS:\s+(\d+) kB/.exec(status);
  return m ? Number(m[1]) * 1024 : 0;
}

/** Samples a process's RSS every `everyMs` until stopped; returns the peak seen. */
export function sampleRss(pid: number, everyMs = 20): { stop: () => number } {
  let peak = rssOf(pid);
  const timer = setInterval(() => {
    try {
      peak = Math.max(peak, rssOf(pid));
    } catch {
      // process gone
    }
  }, everyMs);
  return {
    stop: () => {
      clearInterval(timer);
      return Math.max(peak, rssOf(pid));
    },
  };
}
