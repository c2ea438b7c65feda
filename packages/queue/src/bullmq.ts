import { type Logger, type QueueSample, recordWorkerJob, registerQueueGauges } from "@gw/telemetry";
import { Queue, Worker } from "bullmq";
import type { Redis } from "ioredis";
import type { JobConsumer, JobQueue, ProcessJob, TransactJob } from "./jobs.ts";
import { processTraced, sampledEvery, sendTraced } from "./trace.ts";

const JOB_NAME = "transact";
/** `messaging.system` of the spans. */
const SYSTEM = "bullmq";
/** The queue gauges ask Redis at most this often, however often metrics are collected. */
export const QUEUE_SAMPLE_MS = 5_000;

/**
 * Producer on BullMQ. The job id is the invocation id, so a job is enqueued at most once per
 * invocation. Upstream retries happen inside the job (the retry policy needs the response), so
 * BullMQ itself never retries: attempts = 1.
 */
export function bullmqQueue(opts: { name: string; connection: Redis }): JobQueue {
  const queue = new Queue<TransactJob, void, string>(opts.name, { connection: opts.connection });
  const id = { system: SYSTEM, queue: opts.name };
  return {
    async enqueue(job) {
      await sendTraced(id, job, async (traced) => {
        await queue.add(JOB_NAME, traced, {
          jobId: job.invocationId,
          attempts: 1,
          removeOnComplete: true,
          removeOnFail: { age: 24 * 3600 },
        });
      });
    },
    async has(invocationId) {
      const job = await queue.getJob(invocationId);
      if (!job) return false;
      const state = await job.getState();
      if (state === "completed" || state === "failed") {
        await job.remove().catch(() => {});
        return false;
      }
      return state !== "unknown";
    },
    // Closing a queue whose start-up commands are still in flight on the shared connection
    // would reject them with "Connection is closed" where nobody listens: let them finish first.
    close: async () => {
      await settled(queue.waitUntilReady(), 1_000);
      await queue.close();
    },
  };
}

/**
 * Consumer on BullMQ. A worker that dies mid-job leaves the job's lock to expire; BullMQ's stalled
 * check hands it to another worker once (maxStalledCount 1), and the processor sees from the
 * invocation row that it was already running and decides whether repeating is allowed. A job that
 * stalls again fails, and `onLost` records the invocation as failed.
 *
 * Each job runs in a CONSUMER span continuing the producer's trace (trace.ts). The consumer also
 * reports the queue's depth and oldest waiting job as gauges (`gw.queue.*`): the worker is the
 * side that scales on them, and one report per worker process is enough.
 */
export function bullmqConsumer(opts: {
  name: string;
  connection: Redis;
  concurrency: number;
  lockMs: number;
  logger: Logger;
  process: ProcessJob;
  onLost: (job: TransactJob) => Promise<void>;
  /** How long a queue-gauge sample is reused; default QUEUE_SAMPLE_MS. */
  sampleMs?: number;
}): JobConsumer {
  const id = { system: SYSTEM, queue: opts.name };
  // Invocations whose processor threw: BullMQ reports those as failed too, and they are counted
  // already; any other failure is the queue giving the job up (stalled twice): `lost`.
  const threw = new Set<string>();
  const worker = new Worker<TransactJob>(
    opts.name,
    (job) =>
      processTraced(id, job.data, opts.process).catch((e: unknown) => {
        threw.add(job.data.invocationId);
        throw e;
      }),
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
  worker.on("failed", (job, err) => {
    if (!job) return;
    if (!threw.delete(job.data.invocationId))
      recordWorkerJob({ outcome: "lost", tenantId: job.data.tenantId });
    opts.logger.warn({ invocation_id: job.data.invocationId, reason: err.message }, "job failed");
    opts
      .onLost(job.data)
      .catch((e: unknown) =>
        opts.logger.error({ err: e instanceof Error ? e.message : "error" }, "could not record lost job"),
      );
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
