import { type Logger, registerQueueGauges } from "@gw/telemetry";
import type { CallRef, JobConsumer, JobQueue, ProcessCall } from "./jobs.ts";
import { processTraced, sendTraced } from "./trace.ts";

/**
 * The in-process queue of the all-in-one gateway without Redis: the same processor, the same
 * concurrency bound, no durability (the embedded store is not durable either). Calls carry the
 * trace context like BullMQ's do, and the same gauges are reported. Nothing is ever redelivered.
 */
export function memoryQueue(opts: { concurrency: number; logger: Logger; name?: string }): {
  queue: JobQueue;
  consume: (process: ProcessCall, onLost?: (call: CallRef) => Promise<boolean>) => JobConsumer;
} {
  const id = { system: "in_process", queue: opts.name ?? "in-process" };
  const waiting: Array<{ call: CallRef; at: number }> = [];
  const active = new Set<Promise<void>>();
  const running = new Set<string>();
  let processor: ProcessCall | undefined;
  let lost: ((call: CallRef) => Promise<boolean>) | undefined;
  let closed = false;
  let unregister: (() => void) | undefined;
  const first = { redelivered: false };

  const pump = () => {
    while (processor && !closed && active.size < opts.concurrency && waiting.length > 0) {
      const { call } = waiting.shift() as { call: CallRef };
      const process = processor;
      running.add(call.invocationId);
      const run = processTraced(id, call, (c) => process(c, first))
        .catch(async (e: unknown) => {
          opts.logger.error(
            { invocation_id: call.invocationId, err: e instanceof Error ? e.message : "error" },
            "job failed",
          );
          // A processor that threw: the call must not stay open.
          await lost?.(call).catch(() => false);
        })
        .finally(() => {
          running.delete(call.invocationId);
          active.delete(run);
          pump();
        });
      active.add(run);
    }
  };

  return {
    queue: {
      async enqueue(call) {
        if (closed) throw new Error("queue is closed");
        // One delivery per invocation at a time.
        if (running.has(call.invocationId) || waiting.some((w) => w.call.invocationId === call.invocationId))
          return;
        await sendTraced(id, call, async (traced) => {
          waiting.push({ call: traced, at: Date.now() });
          setImmediate(pump);
        });
      },
      async live() {
        return new Set([...running, ...waiting.map((w) => w.call.invocationId)]);
      },
      async close() {},
    },
    consume(process, onLost) {
      processor = process;
      lost = onLost;
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
