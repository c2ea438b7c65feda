import type { TransactJob } from "./jobs.ts";

/** Bodies up to this size travel in the Redis job; larger ones only in Postgres (DESIGN.md §3 Proxy). */
export const JOB_BODY_MAX_BYTES = 64 * 1024;

/** What Postgres keeps of a job: every field but the body and the trace context (jsonb). */
export type StoredJob = Omit<TransactJob, "body" | "bodyStored" | "traceContext">;

/**
 * The job for Redis from its stored fields and the body: the body inline when small, else only
 * the ids (`bodyStored`), the worker then reads it from Postgres.
 */
export function jobFor(stored: StoredJob, body: Buffer): TransactJob {
  if (body.length > JOB_BODY_MAX_BYTES) return { ...stored, body: "", bodyStored: true };
  return { ...stored, body: body.toString("base64") };
}

/** A job rebuilt from Postgres alone (the reconciler): the worker reads the body from there. */
export function rebuiltJob(stored: Record<string, unknown>): TransactJob {
  return { ...(stored as StoredJob), body: "", bodyStored: true };
}
