import type { Logger } from "@gw/telemetry";
import { Queue, Worker } from "bullmq";
import type { Redis } from "ioredis";
import type { JobConsumer, JobQueue, ProcessJob, TransactJob } from "./jobs.ts";

const JOB_NAME = "transact";

/**
 * Producer on BullMQ. The job id is the invocation id, so a job is enqueued at most once per
 * invocation. Upstream retries happen inside the job (the retry policy needs the response), so
 * BullMQ itself never retries: attempts = 1.
 */
export function bullmqQueue(opts: { name: string; connection: Redis }): JobQueue {
  const queue = new Queue<TransactJob, void, string>(opts.name, { connection: opts.connection });
  return {
    async enqueue(job) {
      await queue.add(JOB_NAME, job, {
        jobId: job.invocationId,
        attempts: 1,
        removeOnComplete: true,
        removeOnFail: { age: 24 * 3600 },
      });
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
 */
export function bullmqConsumer(opts: {
  name: string;
  connection: Redis;
  concurrency: number;
  lockMs: number;
  logger: Logger;
  process: ProcessJob;
  onLost: (job: TransactJob) => Promise<void>;
}): JobConsumer {
  const worker = new Worker<TransactJob>(opts.name, async (job) => opts.process(job.data), {
    connection: opts.connection,
    concurrency: opts.concurrency,
    maxStalledCount: 1,
    lockDuration: opts.lockMs,
    stalledInterval: opts.lockMs,
    autorun: true,
  });
  worker.on("error", (err) => opts.logger.error({ err: err.message }, "queue worker error"));
  worker.on("failed", (job, err) => {
    if (!job) return;
    opts.logger.warn({ invocation_id: job.data.invocationId, reason: err.message }, "job failed");
    opts
      .onLost(job.data)
      .catch((e: unknown) =>
        opts.logger.error({ err: e instanceof Error ? e.message : "error" }, "could not record lost job"),
      );
  });
  return {
    close: async () => {
      await settled(worker.waitUntilReady(), 1_000);
      await worker.close();
    },
  };
}

/** Waits for `p` to settle, at most `ms` (a Redis that never answers must not hold shutdown). */
async function settled(p: Promise<unknown>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([p.catch(() => {}), new Promise<void>((r) => (timer = setTimeout(r, ms)))]);
  clearTimeout(timer);
}
