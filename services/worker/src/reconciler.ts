import { holdLease, purgeStoredRequests, reconcileOnce } from "@gw/invocations";
import type { Runtime } from "@gw/runtime";
import { recordReconciled, recordSwept } from "@gw/telemetry";
import { mayRepeatAfterCrash } from "./processor.ts";

/** How often every worker runs the reconciler and sweeper (a lost job is re-enqueued within ~2 passes). */
export const RECONCILE_EVERY_MS = 5_000;
/** A pending row younger than this is still the proxy's to enqueue. */
export const PENDING_GRACE_MS = 5_000;
/** Added to GW_JOB_LOCK_MS + GW_TRANSACT_TIMEOUT_MS before a running row counts as abandoned. */
const RUNNING_SLACK_MS = 10_000;

/**
 * Postgres is the source of truth, Redis the doorbell (docs/adr/0020): every worker runs the
 * reconciler and the sweeper on an interval; one replica per pass holds the lease (one per queue:
 * deployments sharing a database each reconcile their own pending calls), and the pass
 * itself is idempotent anyway. A pass that is still waiting (Redis down) is not stacked.
 */
export function startReconciler(
  rt: Pick<Runtime, "store" | "logger" | "config" | "invocations" | "jobs" | "instanceId">,
  everyMs = RECONCILE_EVERY_MS,
): () => Promise<void> {
  const { config } = rt;
  let running: Promise<void> | undefined;
  let passes = 0;
  const pass = async () => {
    if (!(await holdLease(rt.store, `reconciler:${config.GW_QUEUE_NAME}`, rt.instanceId, everyMs * 3)))
      return;
    const report = await reconcileOnce(
      {
        store: rt.store,
        invocations: rt.invocations,
        doorbell: {
          queue: config.GW_QUEUE_NAME,
          live: () => rt.jobs.queue.live(),
          ring: (call) => rt.jobs.queue.enqueue(call),
        },
      },
      {
        pendingGraceMs: PENDING_GRACE_MS,
        runningDeadlineMs: config.GW_JOB_LOCK_MS + config.GW_TRANSACT_TIMEOUT_MS + RUNNING_SLACK_MS,
        // The row's method column is named for MCP; it holds any protocol's JSON-RPC method.
        mayRepeat: (row) => mayRepeatAfterCrash(row.protocol, row.mcpMethod),
      },
    );
    if (report.enqueued) recordReconciled({ status: "pending", count: report.enqueued });
    if (report.requeued) recordReconciled({ status: "requeued", count: report.requeued });
    const swept = report.failed + report.streamsEnded;
    if (swept) recordSwept({ count: swept });
    if (report.enqueued || report.requeued || swept) rt.logger.warn(report, "reconciled open invocations");
    // Every 12th pass (about a minute): drop stored requests of finished calls.
    if (++passes % 12 === 0) await purgeStoredRequests(rt.store);
  };
  const tick = () => {
    if (running) return;
    running = pass()
      .catch((e: unknown) =>
        rt.logger.warn({ err: e instanceof Error ? e.name : "error" }, "reconciler pass failed"),
      )
      .finally(() => {
        running = undefined;
      });
  };
  const timer = setInterval(tick, everyMs);
  timer.unref();
  return async () => {
    clearInterval(timer);
    await running;
  };
}
