import { type Logger, type QueueSample, recordWorkerJob, registerQueueGauges } from "@gw/telemetry";
import { Queue, Worker } from "bullmq";
import type { Redis } from "ioredis";
import type { CallRef, Delivery, JobConsumer, JobQueue, ProcessCall } from "./jobs.ts";
import { processTraced, sampledEvery, sendTraced } from "./trace.ts";

const JOB_NAME = "calls";
/** `messaging.system` of the spans. */
const SYSTEM = "bullmq";
/** The queue gauges ask Redis at most this often, however often metrics are collected. */
export const QUEUE_SAMPLE_MS = 5_000;
/** At most this many calls ride in one job (a group-committed batch of pending rows is at most 64). */
export const MAX_CALLS_PER_JOB = 256;

/** The job's data: the calls accepted together, ids only (docs/adr/0023). */
type CallsJob = { calls: CallRef[] };
/** A job enqueued before calls were batched (one call, its fields inline): its ids are all that is read. */
type OneCallJob = CallRef & Record<string, unknown>;

const callsOf = (data: CallsJob | OneCallJob): CallRef[] => {
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

/**
 * Consumer on BullMQ. A job's calls run side by side, at most `concurrency` calls at once in this
 * process (and at most `concurrency` jobs taken). A processor that throws ends its call through
 * `onLost`; the job itself still completes. A worker that dies mid-job leaves the job's lock to
 * expire; BullMQ's stalled check hands it to another worker once (maxStalledCount 1) as a
 * redelivery, and the processor sees from each invocation row whether it was already running and
 * decides whether repeating is allowed. A job that stalls again fails, and `onLost` ends each of its
 * calls still open as failed.
 *
 * Each call runs in a CONSUMER span continuing the producer's trace (trace.ts). The consumer also
 * reports the queue's depth (in jobs) and oldest waiting job as gauges (`gw.queue.*`): the worker
 * is the side that scales on them, and one report per worker process is enough.
 */
export function bullmqConsumer(opts: {
  name: string;
  connection: Redis;
  concurrency: number;
  lockMs: number;
  logger: Logger;
  process: ProcessCall;
  /** Ends a call that must not stay open; true when it was still open. */
  onLost: (call: CallRef) => Promise<boolean>;
  /** How long a queue-gauge sample is reused; default QUEUE_SAMPLE_MS. */
  sampleMs?: number;
}): JobConsumer {
  const id = { system: SYSTEM, queue: opts.name };
  const slot = slots(opts.concurrency);
  const lost = (call: CallRef) =>
    opts.onLost(call).catch((e: unknown) => {
      opts.logger.error({ err: e instanceof Error ? e.message : "error" }, "could not record lost job");
      return false;
    });
  const run = (call: CallRef, delivery: Delivery) =>
    slot(() => processTraced(id, call, (c) => opts.process(c, delivery))).catch(async (e: unknown) => {
      opts.logger.warn(
        { invocation_id: call.invocationId, reason: e instanceof Error ? e.message : "error" },
        "job failed",
      );
      await lost(call);
    });
  const worker = new Worker<CallsJob | OneCallJob>(
    opts.name,
    async (job) => {
      const delivery = { redelivered: job.stalledCounter > 0 };
      await Promise.all(callsOf(job.data).map((call) => run(call, delivery)));
    },
    {
      connection: opts.connection,
      concurrency: opts.concurrency,
      maxStalledCount: 1,
      lockDuration: opts.lockMs,
      stalledInterval: opts.lockMs,
      autorun: true,
    },
  );
  const stats = new Queue(opts.name, { connection: opts.connection });
  const unregister = registerQueueGauges(
    opts.name,
    sampledEvery(opts.sampleMs ?? QUEUE_SAMPLE_MS, () => sampleQueue(stats)),
  );
  worker.on("error", (err) => opts.logger.error({ err: err.message }, "queue worker error"));
  // Only the queue giving a job up (stalled twice) fails it: its calls still open are lost.
  worker.on("failed", (job, err) => {
    if (!job) return;
    opts.logger.warn({ job_id: job.id, reason: err.message }, "job failed");
    for (const call of callsOf(job.data))
      void lost(call).then((ended) => {
        if (ended) recordWorkerJob({ outcome: "lost", tenantId: call.tenantId });
      });
  });
  return {
    close: async () => {
      unregister();
      await settled(worker.waitUntilReady(), 1_000);
      await worker.close();
      await settled(stats.waitUntilReady(), 1_000);
      await stats.close();
    },
  };
}

/** At most `n` of the returned function's tasks run at once; the others wait their turn. */
function slots(n: number) {
  let free = n;
  const waiting: Array<() => void> = [];
  return async <T>(task: () => Promise<T>): Promise<T> => {
    if (free > 0) free--;
    else await new Promise<void>((r) => waiting.push(r));
    try {
      return await task();
    } finally {
      const next = waiting.shift();
      if (next) next();
      else free++;
    }
  };
}

/** Waiting and delayed counts, and the age of the oldest waiting job (the tail of the wait list). */
async function sampleQueue(queue: Queue): Promise<QueueSample> {
  const [counts, oldest] = await Promise.all([
    queue.getJobCounts("wait", "delayed"),
    queue.getJobs(["wait"], 0, 0, true),
  ]);
  const at = oldest[0]?.timestamp;
  return {
    depth: { wait: counts.wait ?? 0, delayed: counts.delayed ?? 0 },
    oldestAgeSeconds: at ? Math.max(0, (Date.now() - at) / 1000) : 0,
  };
}

/** Waits for `p` to settle, at most `ms` (a Redis that never answers must not hold shutdown). */
async function settled(p: Promise<unknown>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([p.catch(() => {}), new Promise<void>((r) => (timer = setTimeout(r, ms)))]);
  clearTimeout(timer);
}
