import { type Logger, registerQueueGauges } from "@gw/telemetry";
import type { JobConsumer, JobQueue, ProcessJob, TransactJob } from "./jobs.ts";
import { processTraced, sendTraced } from "./trace.ts";

/**
 * The in-process queue of the all-in-one gateway without Redis: the same processor, the same
 * concurrency bound, no durability (the embedded store is not durable either). Jobs carry the
 * trace context like BullMQ's do, and the same gauges are reported.
 */
export function memoryQueue(opts: { concurrency: number; logger: Logger; name?: string }): {
  queue: JobQueue;
  consume: (process: ProcessJob) => JobConsumer;
} {
  const id = { system: "in_process", queue: opts.name ?? "in-process" };
  const waiting: Array<{ job: TransactJob; at: number }> = [];
  const active = new Set<Promise<void>>();
  const running = new Set<string>();
  let processor: ProcessJob | undefined;
  let closed = false;
  let unregister: (() => void) | undefined;

  const pump = () => {
    while (processor && !closed && active.size < opts.concurrency && waiting.length > 0) {
      const { job } = waiting.shift() as { job: TransactJob };
      running.add(job.invocationId);
      const run = processTraced(id, job, processor)
        .catch((e: unknown) =>
          opts.logger.error(
            { invocation_id: job.invocationId, err: e instanceof Error ? e.message : "error" },
            "job failed",
          ),
        )
        .finally(() => {
          running.delete(job.invocationId);
          active.delete(run);
          pump();
        });
      active.add(run);
    }
  };

  return {
    queue: {
      async enqueue(job) {
        if (closed) throw new Error("queue is closed");
        // One job per invocation, like BullMQ's job id.
        if (running.has(job.invocationId) || waiting.some((w) => w.job.invocationId === job.invocationId))
          return;
        await sendTraced(id, job, async (traced) => {
          waiting.push({ job: traced, at: Date.now() });
          setImmediate(pump);
        });
      },
      async has(invocationId) {
        return running.has(invocationId) || waiting.some((w) => w.job.invocationId === invocationId);
      },
      async close() {},
    },
    consume(process) {
      processor = process;
      unregister = registerQueueGauges(id.queue, async () => ({
        depth: { wait: waiting.length },
        oldestAgeSeconds: waiting[0] ? Math.max(0, (Date.now() - waiting[0].at) / 1000) : 0,
      }));
      setImmediate(pump);
      return {
        async close() {
          closed = true;
          unregister?.();
          await Promise.all([...active]);
        },
      };
    },
  };
}
