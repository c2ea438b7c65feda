import { Queue } from "bullmq";
import type { Redis } from "ioredis";
import type { CallRef, JobQueue } from "./jobs.ts";
import { sendTraced } from "./trace.ts";

const JOB_NAME = "calls";
/** `messaging.system` of the spans. */
export const SYSTEM = "bullmq";
/** At most this many calls ride in one job (a group-committed batch of pending rows is at most 64). */
export const MAX_CALLS_PER_JOB = 256;

/** The job's data: the calls accepted together, ids only (docs/adr/0023). */
export type CallsJob = { calls: CallRef[] };
/** A job enqueued before calls were batched (one call, its fields inline): its ids are all that is read. */
export type OneCallJob = CallRef & Record<string, unknown>;

export const callsOf = (data: CallsJob | OneCallJob): CallRef[] => {
  if ("calls" in data && Array.isArray(data.calls)) return data.calls;
  const one = data as OneCallJob;
  return [
    {
      tenantId: String(one.tenantId),
      agentId: String(one.agentId),
      invocationId: String(one.invocationId),
      ...(one.traceContext ? { traceContext: one.traceContext } : {}),
    },
  ];
};

/**
 * Producer on BullMQ. The calls enqueued in one turn of the event loop go out as one job: the
 * pending rows of a group commit are answered together, so under load a job carries the whole
 * batch, and alone a call is sent at once (one `setImmediate` later). Upstream retries happen
 * inside the call (the retry policy needs the response), so BullMQ itself never retries:
 * attempts = 1. A job carries ids only; failed jobs are kept a day, a few hundred bytes each.
 */
export function bullmqQueue(opts: { name: string; connection: Redis }): JobQueue {
  const queue = new Queue<CallsJob, void, string>(opts.name, { connection: opts.connection });
  const id = { system: SYSTEM, queue: opts.name };
  let batch: Array<{ call: CallRef; resolve: () => void; reject: (e: unknown) => void }> = [];
  const adding = new Set<Promise<unknown>>();
  const flush = () => {
    const items = batch;
    batch = [];
    for (let i = 0; i < items.length; i += MAX_CALLS_PER_JOB) {
      const part = items.slice(i, i + MAX_CALLS_PER_JOB);
      const add = queue
        .add(
          JOB_NAME,
          { calls: part.map((p) => p.call) },
          { attempts: 1, removeOnComplete: true, removeOnFail: { age: 24 * 3600 } },
        )
        .then(
          () => {
            for (const p of part) p.resolve();
          },
          (e: unknown) => {
            for (const p of part) p.reject(e);
          },
        );
      adding.add(add);
      void add.finally(() => adding.delete(add));
    }
  };
  return {
    enqueue: (call) =>
      sendTraced(
        id,
        call,
        (traced) =>
          new Promise<void>((resolve, reject) => {
            if (batch.length === 0) setImmediate(flush);
            batch.push({ call: traced, resolve, reject });
          }),
      ),
    async live() {
      const jobs = await queue.getJobs(["wait", "active", "delayed", "paused", "prioritized"]);
      const ids = new Set<string>();
      for (const job of jobs) if (job?.data) for (const c of callsOf(job.data)) ids.add(c.invocationId);
      return ids;
    },
    // Closing a queue whose start-up commands are still in flight on the shared connection
    // would reject them with "Connection is closed" where nobody listens: let them finish first.
    close: async () => {
      if (batch.length > 0) flush();
      await settled(Promise.all(adding), 1_000);
      await settled(queue.waitUntilReady(), 1_000);
      await queue.close();
    },
  };
}

/** Waits for `p` to settle, at most `ms` (a Redis that never answers must not hold shutdown). */
export async function settled(p: Promise<unknown>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([p.catch(() => {}), new Promise<void>((r) => (timer = setTimeout(r, ms)))]);
  clearTimeout(timer);
}
