import { execFileSync } from "node:child_process";
import { existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { cpus } from "node:os";

/**
 * `pnpm bench --pin [spec]` or `GW_BENCH_PIN=spec` (docs/performance.md, Running it): the roles on
 * chosen cores with `taskset`. A spec is `role=cpus` pairs, `cpus` in taskset's list form (`0`,
 * `1`, `0-1`). The bench process is the load generator: wrk, the open loop's client, and what the
 * bench starts before the services (upstream, bare proxy, control plane) inherit its core.
 * Postgres and Redis are system services: their processes are pinned in place and given their
 * own affinity back when the bench ends (also on Ctrl-C and on an error).
 */
export type Role = "proxy" | "worker" | "postgres" | "load" | "upstream" | "redis";
export type PinSpec = Partial<Record<Role, string>>;

const ROLES: readonly Role[] = ["proxy", "worker", "postgres", "load", "upstream", "redis"];
/** Two cores: the proxy on one, everything else on the other (the worker off the proxy's core). */
export const DEFAULT_PIN = "proxy=0,worker=1,postgres=1,load=1";

/** The spec of `--pin [spec]` or GW_BENCH_PIN; null: unpinned. Throws on a malformed spec. */
export function pinSpecOf(argv: readonly string[], env: string | undefined): PinSpec | null {
  const at = argv.indexOf("--pin");
  const next = at >= 0 ? argv[at + 1] : undefined;
  const text = at >= 0 ? (next && !next.startsWith("--") ? next : DEFAULT_PIN) : env || null;
  return text === null ? null : parsePin(text, cpus().length);
}

export function parsePin(text: string, cores: number): PinSpec {
  const spec: PinSpec = {};
  for (const part of text.split(",").filter(Boolean)) {
    const [role, list] = part.split("=");
    if (!ROLES.includes(role as Role)) throw new Error(`--pin: unknown role "${role}" (${ROLES.join(", ")})`);
    if (!list || !/^\d+(-\d+)?(:\d+)?$/.test(list))
      throw new Error(`--pin: ${role} needs a core list such as 0 or 0-1, not "${list ?? ""}"`);
    const highest = Math.max(...list.split(/[-:]/).map(Number));
    if (highest >= cores) throw new Error(`--pin: ${role}=${list}, but this machine has ${cores} cores`);
    spec[role as Role] = list;
  }
  return spec;
}

/** The printed form: `proxy 0, worker 1, ...` in the roles' order. */
export function describePin(spec: PinSpec): string {
  return ROLES.filter((r) => spec[r] !== undefined)
    .map((r) => `${r === "postgres" ? "Postgres" : r === "redis" ? "Redis" : r} ${spec[r]}`)
    .join(", ");
}

let tasksetFound: boolean | undefined;
/** Whether taskset (util-linux) is installed. */
export function hasTaskset(): boolean {
  if (tasksetFound === undefined) {
    try {
      execFileSync("taskset", ["-V"], { stdio: "ignore" });
      tasksetFound = true;
    } catch {
      tasksetFound = false;
    }
  }
  return tasksetFound;
}

/** The CPU list a process may run on now (taskset's list form). */
export function affinityOf(pid: number): string {
  const out = execFileSync("taskset", ["-c", "-p", String(pid)], { encoding: "utf8" });
  return out.slice(out.lastIndexOf(":") + 1).trim();
}

/** Pins a process and all its threads (libuv's pool, Postgres's none) to `list`. */
export function pin(pid: number, list: string): void {
  execFileSync("taskset", ["-a", "-c", "-p", list, String(pid)], { stdio: "ignore" });
}

/** The processes of a system service by command name (`postgres`, `redis-server`). */
function processesNamed(prefix: string): number[] {
  const out: number[] = [];
  for (const p of readdirSync("/proc")) {
    if (!/^\d+$/.test(p)) continue;
    try {
      const stat = readFileSync(`/proc/${p}/stat`, "utf8");
      if (stat.slice(stat.indexOf("(") + 1, stat.lastIndexOf(")")).startsWith(prefix)) out.push(Number(p));
    } catch {
      // ended meanwhile
    }
  }
  return out;
}

const SERVICES: Partial<Record<Role, string>> = { postgres: "postgres", redis: "redis-server" };
type Saved = { original: Map<number, string>; fallback: string };
/** The affinity each pinned system-service process had (and, for ones forked since, their service's). */
const saved = new Map<string, Saved>();
/**
 * The same, on disk while the services are pinned, with the pinning run's pid: a run killed
 * without its handlers (SIGKILL) is undone by the next run, and two pinned runs never overlap (the
 * second would take the first's pinning for the services' own affinity).
 */
let stateFile: string | undefined;

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

/**
 * Before pinning anything: takes `file` as the record of the services' affinity. A record left by
 * a run that died is restored first (said so); one of a live run is an error.
 */
export function claimServices(file: string): void {
  stateFile = file;
  if (!existsSync(file)) return;
  const left = JSON.parse(readFileSync(file, "utf8")) as {
    owner: number;
    services: Record<string, { original: Record<string, string>; fallback: string }>;
  };
  if (left.owner !== process.pid && alive(left.owner))
    throw new Error(`--pin: another pinned bench (pid ${left.owner}) is running; run one at a time`);
  for (const [role, e] of Object.entries(left.services))
    saved.set(role, {
      original: new Map(Object.entries(e.original).map(([pid, list]) => [Number(pid), list])),
      fallback: e.fallback,
    });
  restoreServices();
  console.log(
    `--pin: gave Postgres/Redis back the affinity an earlier pinned run (pid ${left.owner}) left changed`,
  );
}

function writeState(): void {
  if (!stateFile) return;
  const services = Object.fromEntries(
    [...saved].map(([role, e]) => [role, { original: Object.fromEntries(e.original), fallback: e.fallback }]),
  );
  writeFileSync(stateFile, `${JSON.stringify({ owner: process.pid, services })}\n`);
}

/**
 * Pins every process of a system service (`postgres`: the postmaster and its backends; new backends
 * inherit the postmaster's affinity) and remembers what each had. Returns how many it pinned.
 */
export function pinService(role: "postgres" | "redis", list: string): number {
  const pids = processesNamed(SERVICES[role] as string);
  const entry = saved.get(role) ?? { original: new Map<number, string>(), fallback: "" };
  for (const pid of pids) {
    try {
      if (!entry.original.has(pid)) entry.original.set(pid, affinityOf(pid));
      pin(pid, list);
    } catch {
      // ended meanwhile
    }
  }
  // A backend forked while pinned has no affinity of its own to go back to: the first one seen.
  entry.fallback ||= [...entry.original.values()][0] ?? `0-${cpus().length - 1}`;
  saved.set(role, entry);
  writeState();
  return pids.length;
}

/**
 * Gives every pinned system service its own affinity back (each process it had, processes forked
 * since their service's). Synchronous and idempotent: it runs from the exit handler too.
 */
export function restoreServices(): void {
  for (const [role, entry] of saved) {
    for (const pid of processesNamed(SERVICES[role as Role] as string)) {
      try {
        pin(pid, entry.original.get(pid) ?? entry.fallback);
      } catch {
        // ended meanwhile
      }
    }
  }
  saved.clear();
  if (stateFile && existsSync(stateFile)) rmSync(stateFile);
}

/** The one line that undoes a pinning by hand, should the bench be killed (SIGKILL runs no handler). */
export function restoreHint(): string {
  return [...saved]
    .map(([role, e]) => `taskset -a -c -p ${e.fallback} <each ${SERVICES[role as Role]} pid>`)
    .join("; ");
}
