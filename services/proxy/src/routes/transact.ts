import type { AppEnv } from "@gw/http";
import { jobFor } from "@gw/queue";
import { recordAddedDuration, recordProxyCall } from "@gw/telemetry";
import type { Hono } from "hono";
import type { ProxyDeps } from "../deps.ts";
import { storedJobOf } from "../job.ts";
import { type Admitted, admitCall, gatewayHeaders } from "../pipeline.ts";

/** How long an enqueue may take before it is given up; the reconciler then enqueues the job. */
const ENQUEUE_WAIT_MS = 1_000;
/** ioredis states in which a command would only be queued until Redis is back. */
const REDIS_DOWN = new Set(["reconnecting", "close", "end"]);

/**
 * POST /v1/proxy/{id}: steps 1–8 (the `pending` record and its stored request are durable before
 * the answer), then step 9 here: answer 202 and ring the doorbell (enqueue the job) beside it. The
 * 202 needs only the durable row, so it does not wait for Redis: Postgres is the source of truth
 * (docs/adr/0020) and a job Redis did not take is enqueued by the reconciler. Graceful shutdown
 * waits for enqueues under way.
 */
export function registerTransact(app: Hono<AppEnv>, deps: ProxyDeps) {
  app.post("/v1/proxy/:id", async (c) => {
    const start = performance.now();
    const call = await admitCall(c, deps, "transactional");
    deps.inflight.track(enqueue(call, deps, c.var.log));
    recordProxyCall({ mode: "transactional", outcome: "accepted", errorClass: "none" });
    // What the gateway adds to a transactional call: the time to its 202.
    recordAddedDuration(performance.now() - start, { mode: "transactional" });
    return c.json({ invocation_id: call.invocationId }, 202, gatewayHeaders(call));
  });
}

/** Enqueues, bounded in time; a failure is logged and left to the reconciler, never to the caller. */
async function enqueue(call: Admitted, deps: ProxyDeps, log: ProxyDeps["logger"]): Promise<void> {
  // Redis known to be down: do not even wait; the durable row is enough (the reconciler rings).
  if (deps.redis && REDIS_DOWN.has(deps.redis.status)) {
    log.warn(
      { invocation_id: call.invocationId, err: "redis down" },
      "enqueue skipped; the reconciler will enqueue the job",
    );
    return;
  }
  const job = jobFor(storedJobOf(call), call.forward ?? Buffer.alloc(0));
  let timer: NodeJS.Timeout | undefined;
  const wait = new Promise<"late">((r) => {
    timer = setTimeout(() => r("late"), ENQUEUE_WAIT_MS);
  });
  const sent = deps.jobs.queue.enqueue(job).then(
    () => "sent" as const,
    (e: unknown) => e,
  );
  const how = await Promise.race([sent, wait]);
  clearTimeout(timer);
  if (how === "sent") return;
  log.warn(
    {
      invocation_id: call.invocationId,
      err: how === "late" ? "timeout" : how instanceof Error ? how.name : "error",
    },
    "enqueue failed; the reconciler will enqueue the job",
  );
}
