import type { StoredJob, TransactJob } from "./jobs.ts";

/** A call as the worker makes it, from its stored request (`invocation_requests` job and body). */
export function jobOf(stored: Record<string, unknown>, body: Buffer): TransactJob {
  return { ...(stored as StoredJob), body };
}
