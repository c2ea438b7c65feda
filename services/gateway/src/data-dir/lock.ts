import { linkSync, mkdirSync, readFileSync, rmdirSync, statSync, unlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";

/** The file that says which gateway holds a data directory: its pid. */
export const LOCK_FILE = "gateway.pid";

/** Another live process holds the directory. */
export class DataDirBusy extends Error {
  override name = "DataDirBusy";
  constructor(readonly pid: number) {
    super(`held by process ${pid}`);
  }
}

/**
 * Takes the data directory `dir` for this process until it exits: one gateway per directory, since
 * two embedded stores on the same files would corrupt them. The lock is `gateway.pid`, created
 * whole or not at all (a link of a file already written). A pid file whose process is gone (a
 * gateway killed outright) is stale and taken over; as Postgres does for its own pid file, a pid
 * equal to this process's or its parent's counts as gone too (after a container restart the same
 * small pids come back). Throws DataDirBusy naming the live holder.
 */
export async function lockDataDir(dir: string): Promise<void> {
  const file = join(dir, LOCK_FILE);
  for (let attempt = 0; ; attempt++) {
    if (createWhole(file, `${process.pid}\n`)) break;
    const holder = pidIn(file);
    if (holder !== undefined && holder !== process.pid && holder !== process.ppid && alive(holder)) {
      throw new DataDirBusy(holder);
    }
    if (attempt >= 20) throw new Error(`could not take ${file}`);
    // Stale, or being taken over by a start beside this one: wait for that one, then look again.
    if (!takeOverStale(file, holder)) await sleep(50);
  }
  process.on("exit", () => {
    if (pidIn(file) === process.pid) unlinkSync(file);
  });
}

/** Creates `file` holding `body` if it does not exist; false if it does. */
function createWhole(file: string, body: string): boolean {
  const temp = `${file}.${process.pid}.tmp`;
  writeFileSync(temp, body, { mode: 0o600 });
  try {
    linkSync(temp, file);
    return true;
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === "EEXIST") return false;
    throw e;
  } finally {
    unlinkSync(temp);
  }
}

/**
 * Removes the stale lock `file` (still holding `holder`) under a short-lived mutex, so that two
 * starts that both found it stale cannot both remove it and each take the directory: the second
 * would remove the first one's fresh lock. False when another start holds the mutex.
 */
function takeOverStale(file: string, holder: number | undefined): boolean {
  const mutex = `${file}.takeover`;
  try {
    mkdirSync(mutex);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== "EEXIST") throw e;
    // Left by a start that died while taking over: a take-over lasts milliseconds.
    if (Date.now() - mtimeMs(mutex) > 10_000) {
      try {
        rmdirSync(mutex);
      } catch {
        // Removed meanwhile by another start.
      }
    }
    return false;
  }
  try {
    if (pidIn(file) === holder) unlinkSync(file);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== "ENOENT") throw e;
  } finally {
    rmdirSync(mutex);
  }
  return true;
}

/** The pid a lock file holds, or undefined (gone, or not a pid). */
function pidIn(file: string): number | undefined {
  try {
    const pid = Number(readFileSync(file, "utf8").trim());
    return Number.isSafeInteger(pid) && pid > 0 ? pid : undefined;
  } catch {
    return undefined;
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    // EPERM: it exists, and belongs to another user.
    return (e as NodeJS.ErrnoException).code === "EPERM";
  }
}

function mtimeMs(path: string): number {
  try {
    return statSync(path).mtimeMs;
  } catch {
    return Date.now();
  }
}
