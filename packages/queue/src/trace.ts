import { recordWorkerJob, tracer } from "@gw/telemetry";
import { context, propagation, ROOT_CONTEXT, SpanKind, SpanStatusCode, trace } from "@opentelemetry/api";
import type { CallRef } from "./jobs.ts";

/** Which queue a span is about: `messaging.system` and `messaging.destination.name`. */
export type QueueIdentity = { system: string; queue: string };

/**
 * Enqueues `call` inside a PRODUCER span `send <queue>` and puts the W3C trace context of that span
 * into it (`traceContext`), so the worker's spans join the caller's trace. Attribute names are
 * the OpenTelemetry messaging conventions; the message id is the invocation id.
 */
export async function sendTraced(
  id: QueueIdentity,
  job: CallRef,
  send: (job: CallRef) => Promise<void>,
): Promise<void> {
  const span = tracer.startSpan(`send ${id.queue}`, {
    kind: SpanKind.PRODUCER,
    attributes: {
      "messaging.system": id.system,
      "messaging.destination.name": id.queue,
      "messaging.operation.type": "send",
      "messaging.operation.name": "send",
      "messaging.message.id": job.invocationId,
    },
  });
  const ctx = trace.setSpan(context.active(), span);
  const traceContext: Record<string, string> = {};
  propagation.inject(ctx, traceContext);
  try {
    await context.with(ctx, () => send({ ...job, traceContext }));
  } catch (e) {
    span.setStatus({ code: SpanStatusCode.ERROR, message: e instanceof Error ? e.name : "error" });
    throw e;
  } finally {
    span.end();
  }
}

/**
 * Runs `process(call)` inside a CONSUMER span `process <queue>` whose parent is the trace context
 * the producer put in the call (a new trace when there is none: telemetry was off). Spans the
 * processor makes (upstream client calls, settlement...) become its children. Counts the call in
 * `gw.worker.jobs` as completed or failed.
 */
export async function processTraced(
  id: QueueIdentity,
  job: CallRef,
  process: (job: CallRef) => Promise<void>,
): Promise<void> {
  // Extract from the root, not the active context: only what travelled in the job counts.
  const parent = propagation.extract(ROOT_CONTEXT, job.traceContext ?? {});
  const span = tracer.startSpan(
    `process ${id.queue}`,
    {
      kind: SpanKind.CONSUMER,
      attributes: {
        "messaging.system": id.system,
        "messaging.destination.name": id.queue,
        "messaging.operation.type": "process",
        "messaging.operation.name": "process",
        "messaging.message.id": job.invocationId,
        "gw.invocation_id": job.invocationId,
      },
    },
    parent,
  );
  try {
    await context.with(trace.setSpan(parent, span), () => process(job));
    recordWorkerJob({ outcome: "completed", tenantId: job.tenantId });
  } catch (e) {
    recordWorkerJob({ outcome: "failed", tenantId: job.tenantId });
    span.setStatus({ code: SpanStatusCode.ERROR, message: e instanceof Error ? e.name : "error" });
    throw e;
  } finally {
    span.end();
  }
}

/**
 * Caches an async sample for `ms`: the metric reader may collect often (several readers, a scrape
 * storm), the queue is asked at most once per period.
 */
export function sampledEvery<T>(ms: number, sample: () => Promise<T>): () => Promise<T> {
  let last: { at: number; value: Promise<T> } | undefined;
  return () => {
    const now = performance.now();
    if (!last || now - last.at >= ms) {
      const value = sample();
      // A failed sample is not cached: the next collection asks again.
      value.catch(() => (last = undefined));
      last = { at: now, value };
    }
    return last.value;
  };
}
