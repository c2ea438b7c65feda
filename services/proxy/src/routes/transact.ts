import { gatewayHeaders } from "@gw/forward";
import { answerJson } from "@gw/http";
import { recordAddedDuration, recordProxyCall } from "@gw/telemetry";
import type { ProxyDeps } from "../deps.ts";
import type { ProxyExchange } from "../exchange.ts";
import { type Admitted, admitCall } from "../pipeline.ts";
import { timeline } from "../timeline.ts";

/** How long an enqueue may take before it is given up; the reconciler then enqueues the job. */
const ENQUEUE_WAIT_MS = 1_000;
/** ioredis states in which a command would only be queued until Redis is back. */
const REDIS_DOWN = new Set(["reconnecting", "close", "end"]);

/**
 * POST /v1/proxy/{id} (routed by direct.ts): steps 1–8 (the `pending` record and its stored
 * request are durable before the answer), then answer 202 and ring the doorbell (enqueue the job)
 * beside it; a worker claims the call and runs step 9, the forward step (packages/forward). The
 * 202 needs only the durable row, so it does not wait for Redis: Postgres is the source of truth
 * (docs/adr/0020) and a job Redis did not take is enqueued by the reconciler. Graceful shutdown
 * waits for enqueues under way.
 */
export async function transactCall(x: ProxyExchange, deps: ProxyDeps): Promise<void> {
  const start = performance.now();
  timeline?.mark(x.incoming, "authenticated");
  const call = await admitCall(x, deps, "transactional");
  x.fields.invocation_id = call.invocationId;
  // A caller that went away before its 202 (it timed out, it was cut) learnt of no invocation: the
  // call must never run, so its row is ended `cancelled` (as a stream whose client left) instead
  // of enqueued.
  if (x.outgoing.closed) {
    const ref = { tenantId: call.tenantId, id: call.invocationId, agentId: call.agent.id };
    deps.inflight.track(deps.invocations.abandon(ref, "cancelled"));
    return;
  }
  deps.inflight.track(enqueue(call, deps, x));
  timeline?.mark(call, "enqueued");
  recordProxyCall({ mode: "transactional", outcome: "accepted", errorClass: "none" });
  // What the gateway adds to a transactional call: the time to its 202.
  recordAddedDuration(performance.now() - start, { mode: "transactional" });
  answerJson(x, 202, { invocation_id: call.invocationId }, gatewayHeaders(call));
  timeline?.done(x.incoming, call, call.invocationId);
}

/** Enqueues, bounded in time; a failure is logged and left to the reconciler, never to the caller. */
async function enqueue(call: Admitted, deps: ProxyDeps, x: ProxyExchange): Promise<void> {
  // Redis known to be down: do not even wait; the durable row is enough (the reconciler rings).
  if (deps.redis && REDIS_DOWN.has(deps.redis.status)) {
    x.log.warn(
      { invocation_id: call.invocationId, err: "redis down" },
      "enqueue skipped; the reconciler will enqueue the job",
    );
    return;
  }
  // Ids only: the call itself was stored with its pending row (steps/invocation.ts).
  const ref = { tenantId: call.tenantId, agentId: call.agent.id, invocationId: call.invocationId };
  let timer: NodeJS.Timeout | undefined;
  const wait = new Promise<"late">((r) => {
    timer = setTimeout(() => r("late"), ENQUEUE_WAIT_MS);
  });
  const sent = deps.jobs.queue.enqueue(ref).then(
    () => "sent" as const,
    (e: unknown) => e,
  );
  const how = await Promise.race([sent, wait]);
  clearTimeout(timer);
  if (how === "sent") return;
  x.log.warn(
    {
      invocation_id: call.invocationId,
      err: how === "late" ? "timeout" : how instanceof Error ? how.name : "error",
    },
    "enqueue failed; the reconciler will enqueue the job",
  );
}
