import { setTimeout as sleep } from "node:timers/promises";
import { type Logger, type QueueSample, recordWorkerJob, registerQueueGauges } from "@gw/telemetry";
import { type Job, Queue, Worker } from "bullmq";
import type { Redis } from "ioredis";
import { type CallsJob, callsOf, type OneCallJob, SYSTEM, settled } from "./bullmq.ts";
import type { CallRef, Delivery, JobConsumer, ProcessCall } from "./jobs.ts";
import { processTraced, sampledEvery } from "./trace.ts";

/** The queue gauges ask Redis at most this often, however often metrics are collected. */
export const QUEUE_SAMPLE_MS = 5_000;

/**
 * Consumer on BullMQ. At most `concurrency` calls run at once in this process (one slot pool), and
 * a job is fetched only when a slot is free and no call waits for one: at most one job's calls
 * beyond the pool wait here, the rest stay in Redis, where the wait list (the autoscaler's signal)
 * counts them and another replica can take them (docs/adr/0023). A job's calls run side by side;
 * a processor that throws ends its call through `onLost`, and the job still completes.
 *
 * The jobs are fetched by hand (a `Worker` without processor), so the consumer renews their locks
 * itself, all in one call. A worker that dies mid-job leaves the job's lock to expire; BullMQ's
 * stalled check hands it to another worker once (maxStalledCount 1) as a redelivery, and the
 * processor sees from each invocation row whether it was already running and decides whether
 * repeating is allowed.
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
  const pool = slots(opts.concurrency);
  const lost = (call: CallRef) =>
    opts.onLost(call).catch((e: unknown) => {
      opts.logger.error({ err: message(e) }, "could not record lost job");
      return false;
    });
  const run = (call: CallRef, delivery: Delivery) =>
    pool
      .run(() => processTraced(id, call, (c) => opts.process(c, delivery)))
      .catch(async (e: unknown) => {
        opts.logger.warn({ invocation_id: call.invocationId, reason: message(e) }, "job failed");
        await lost(call);
      });
  const worker = new Worker<CallsJob | OneCallJob>(opts.name, null, {
    connection: opts.connection,
    maxStalledCount: 1,
    lockDuration: opts.lockMs,
    stalledInterval: opts.lockMs,
  });
  const stats = new Queue(opts.name, { connection: opts.connection });
  const unregister = registerQueueGauges(
    opts.name,
    sampledEvery(opts.sampleMs ?? QUEUE_SAMPLE_MS, () => sampleQueue(stats)),
  );
  worker.on("error", (err) => opts.logger.error({ err: err.message }, "queue worker error"));
  // A job stalled twice is marked failed by BullMQ's stalled check and failed for good when a
  // worker next fetches it (getNextJob), which emits `failed` here: its calls still open are lost.
  // When no worker fetches it, or Redis lost the job, the sweeper ends (or re-runs) its overdue
  // running calls and the reconciler rings again for its pending ones (docs/reliability.md).
  worker.on("failed", (job, err) => {
    if (!job) return;
    opts.logger.warn({ job_id: job.id, reason: err.message }, "job failed");
    for (const call of callsOf(job.data))
      void lost(call).then((ended) => {
        if (ended) recordWorkerJob({ outcome: "lost", tenantId: call.tenantId });
      });
  });
  // BullMQ starts the stalled check only in run(), which a worker without processor never calls.
  worker.startStalledCheckTimer().catch((e: unknown) => {
    opts.logger.error({ err: message(e) }, "queue worker error");
  });

  /**
   * The jobs taken and not yet completed, by id. `running` while their calls run: the locks of
   * those are renewed; `done` settles once the job is completed (or could not be).
   */
  const held = new Map<
    string,
    { token: string; running: boolean; calls: Promise<unknown>; done: Promise<void> }
  >();
  const take = (job: Job<CallsJob | OneCallJob>, token: string) => {
    const jobId = job.id ?? "";
    const delivery = { redelivered: job.stalledCounter > 0 };
    // Every call asks for its slot now, before the fetch loop looks at the pool again.
    const calls = (async () => Promise.all(callsOf(job.data).map((call) => run(call, delivery))))();
    const entry = { token, running: true, calls, done: Promise.resolve() };
    entry.done = calls
      .catch((e: unknown) => opts.logger.warn({ job_id: jobId, reason: message(e) }, "job failed"))
      .then(() => {
        entry.running = false;
        return job.moveToCompleted(undefined, token, false);
      })
      .then(
        () => {},
        // The lock was lost (the job was taken back as stalled) or Redis is away: the job's calls
        // are settled in Postgres, whatever BullMQ does with the job now.
        (e: unknown) => opts.logger.warn({ job_id: jobId, reason: message(e) }, "could not complete job"),
      )
      .finally(() => held.delete(jobId));
    held.set(jobId, entry);
  };

  // The locks of all running jobs are renewed together, every lockMs / 2.
  let renewing = false;
  const renewal = setInterval(() => {
    const ids = [...held].filter(([, h]) => h.running).map(([jobId]) => jobId);
    if (renewing || ids.length === 0) return;
    renewing = true;
    const tokens = ids.map((jobId) => held.get(jobId)?.token ?? "");
    void worker
      .extendJobLocks(ids, tokens, opts.lockMs)
      .then(
        (failed) => {
          // A job whose calls ended meanwhile may already be completed: no lock left to renew.
          const lostLocks = failed.filter((jobId) => held.get(jobId)?.running);
          if (lostLocks.length > 0) opts.logger.warn({ job_ids: lostLocks }, "job lock not renewed");
        },
        (e: unknown) => opts.logger.warn({ job_ids: ids, reason: message(e) }, "job lock not renewed"),
      )
      .finally(() => {
        renewing = false;
      });
  }, opts.lockMs / 2);

  let stopping = false;
  let closed = false;
  const pause = new AbortController();
  const fetching = (async () => {
    for (let n = 0; !stopping; n++) {
      await pool.whenFree();
      if (stopping) break;
      const token = `${worker.id}:${n}`;
      try {
        const job = await worker.getNextJob(token, { block: true });
        if (job && closed) {
          // Taken by a fetch that outlived close's wait: its lock expires and the stalled check
          // hands it to a live worker.
          opts.logger.warn({ job_id: job.id }, "job taken after shutdown left to the stalled check");
        } else if (job) take(job, token);
      } catch (e) {
        if (stopping) break;
        opts.logger.error({ err: message(e) }, "could not fetch a job");
        await sleep(1_000, undefined, { signal: pause.signal }).catch(() => {});
      }
    }
  })();

  return {
    close: async () => {
      unregister();
      stopping = true;
      pause.abort();
      pool.wake();
      // Wakes a getNextJob blocked in BZPOPMIN by ending the blocking connection. In manual mode
      // BullMQ tracks no job of ours, so `force` waits for nothing it would otherwise wait for, and
      // the consumer's connection is shared (an ioredis instance), which BullMQ leaves open: the
      // held jobs are still completed through it below.
      await settled(worker.waitUntilReady(), 1_000);
      await worker.close(true);
      // A fetch under way on a Redis that never answers must not hold shutdown; a job it takes
      // before this wait ends is run like the others.
      await settled(fetching, 1_000);
      closed = true;
      const jobs = [...held.values()];
      await Promise.all(jobs.map((h) => h.calls));
      // Completing needs Redis: one that never answers leaves the jobs to the stalled check.
      await settled(Promise.all(jobs.map((h) => h.done)), 1_000);
      clearInterval(renewal);
      await settled(stats.waitUntilReady(), 1_000);
      await stats.close();
    },
  };
}

/**
 * At most `n` of the pool's tasks run at once; the others wait their turn. A task waits only when
 * no slot is free, so "a slot is free" also means "no task is waiting".
 */
function slots(n: number) {
  let free = n;
  const waiting: Array<() => void> = [];
  let onFree: (() => void) | undefined;
  const wake = () => {
    onFree?.();
    onFree = undefined;
  };
  return {
    async run<T>(task: () => Promise<T>): Promise<T> {
      if (free > 0) free--;
      else await new Promise<void>((r) => waiting.push(r));
      try {
        return await task();
      } finally {
        const next = waiting.shift();
        if (next) next();
        else {
          free++;
          wake();
        }
      }
    },
    /** Resolves once a slot is free (at once if one is), or on `wake`. One waiter at a time. */
    whenFree: (): Promise<void> => (free > 0 ? Promise.resolve() : new Promise<void>((r) => (onFree = r))),
    wake,
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

const message = (e: unknown) => (e instanceof Error ? e.message : "error");
