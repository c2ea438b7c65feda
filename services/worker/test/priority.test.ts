// @stores once: the worker process's scheduling priority.
import { type ChildProcess, spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { eventually, newTenant, testEnv } from "@gw/testkit";
import { afterEach, describe, expect, it } from "vitest";

// The worker process lowers its own priority to GW_WORKER_NICE (default 10): on a host it shares
// with a proxy, callers waiting on the proxy come before the background run of calls already
// answered 202 (docs/performance.md). Read from the kernel's view of the real process.

const REPO = fileURLToPath(new URL("../../../", import.meta.url));
const hasRedis = Boolean(process.env.REDIS_URL);

/** The nice value of `pid` (field 19 of /proc/<pid>/stat, after the parenthesised name). */
function niceOf(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  return Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[16]);
}

const children: ChildProcess[] = [];
afterEach(() => {
  for (const c of children.splice(0)) c.kill("SIGKILL");
});

function startWorkerProcess(extra: Record<string, string>): ChildProcess {
  const env = { ...(testEnv({ GW_QUEUE_NAME: `nice-${newTenant()}` }) as Record<string, string>), ...extra };
  const child = spawn(process.execPath, ["--import", "tsx", "services/worker/src/main.ts"], {
    cwd: REPO,
    env: { ...process.env, ...env, PORT: "0", GW_LOG_LEVEL: "silent" },
    stdio: "ignore",
  });
  children.push(child);
  return child;
}

describe("worker priority (GW_WORKER_NICE)", () => {
  if (!hasRedis) {
    it.skip("skipped: REDIS_URL is not set (pnpm test without servers; CI sets it, see docs/testing.md)", () => {});
    return;
  }
  it.each([
    ["by default", {}, 10],
    ["as configured", { GW_WORKER_NICE: "7" }, 7],
  ] as const)("runs at a lower priority than the proxy %s", async (_label, extra, nice) => {
    const child = startWorkerProcess(extra);
    await eventually(() => (niceOf(child.pid as number) === nice ? true : undefined), 30_000);
  });

  it("refuses a value outside 0–19 at start-up", async () => {
    const child = startWorkerProcess({ GW_WORKER_NICE: "-5" });
    const code = await new Promise((r) => child.once("exit", r));
    expect(code).toBe(1);
  });
});
