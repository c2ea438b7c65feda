import type { ChildProcess } from "node:child_process";
import { existsSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { setTimeout as sleep } from "node:timers/promises";
import { stopAll } from "./procs.ts";

/**
 * One measured window of a process preloaded with a probe (`alloc-probe.cjs`, `steps-probe.cjs`):
 * SIGUSR2 starts it (in the mode `/tmp/<name>-<pid>.<flag>` asks for, when `flagged`), `run`
 * makes the calls, SIGUSR2 ends it, and the probe's `/tmp/<name>-<pid>.json` is read back.
 */
export async function probeWindow<T>(
  proc: ChildProcess,
  name: string,
  flag: string,
  flagged: boolean,
  run: () => Promise<number>,
  /** What the flag file says (a mode of the probe's), when `flagged`. */
  flagText = "",
): Promise<T & { calls: number }> {
  const file = `/tmp/${name}-${proc.pid}.json`;
  const flagFile = `/tmp/${name}-${proc.pid}.${flag}`;
  rmSync(file, { force: true });
  if (flagged) writeFileSync(flagFile, flagText);
  else rmSync(flagFile, { force: true });
  proc.kill("SIGUSR2");
  await sleep(200);
  const calls = await run();
  proc.kill("SIGUSR2");
  for (let i = 0; i < 600 && !existsSync(file); i++) await sleep(100);
  return { ...(JSON.parse(readFileSync(file, "utf8")) as T), calls };
}

/** Runs a bench script's `main`, stops every process it started, and exits with its code. */
export function runMain(main: () => Promise<number>): void {
  main()
    .then(async (code) => {
      await stopAll();
      process.exit(code);
    })
    .catch(async (e) => {
      console.error(e);
      await stopAll();
      process.exit(1);
    });
}
