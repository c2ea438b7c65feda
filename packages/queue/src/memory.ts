import type { Logger } from "@gw/telemetry";
import type { JobConsumer, JobQueue, ProcessJob, TransactJob } from "./jobs.ts";

/**
 * The in-process queue of the all-in-one gateway without Redis: the same processor, the same
 * concurrency bound, no durability (the embedded store is not durable either).
 */
export function memoryQueue(opts: { concurrency: number; logger: Logger }): {
  queue: JobQueue;
  consume: (process: ProcessJob) => JobConsumer;
} {
  const waiting: TransactJob[] = [];
  const active = new Set<Promise<void>>();
  let processor: ProcessJob | undefined;
  let closed = false;

  const pump = () => {
    while (processor && !closed && active.size < opts.concurrency && waiting.length > 0) {
      const job = waiting.shift() as TransactJob;
      const run = processor(job)
        .catch((e: unknown) =>
          opts.logger.error(
            { invocation_id: job.invocationId, err: e instanceof Error ? e.message : "error" },
            "job failed",
          ),
        )
        .finally(() => {
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
        waiting.push(job);
        setImmediate(pump);
      },
      async close() {},
    },
    consume(process) {
      processor = process;
      setImmediate(pump);
      return {
        async close() {
          closed = true;
          await Promise.all([...active]);
        },
      };
    },
  };
}
