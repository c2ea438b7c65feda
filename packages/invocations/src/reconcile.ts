import type { Store } from "@gw/db";
import { DEAD_AFTER_MS } from "./heartbeat.ts";
import type { Lifecycle } from "./lifecycle.ts";
import type { StoredRequest } from "./repos/invocation-reservations.ts";
import {
  forgetInstances,
  hasRequest,
  loadRequest,
  orphanStreams,
  overdueRunning,
  purgeRequests,
  requeueRunning,
  stalePending,
  statusOf,
  takeLease,
} from "./repos/reliability.ts";

/** The stored request of an invocation (the worker reads big bodies and rebuilt jobs from it). */
export function storedRequest(
  store: Pick<Store, "query">,
  tenantId: string,
  invocationId: string,
): Promise<StoredRequest | undefined> {
  return loadRequest(store.query, tenantId, invocationId);
}

/** The queue as the reconciler sees it: which calls have a live job, and ring the doorbell again. */
export type Doorbell = {
  /** The queue this doorbell rings (only its pending rows are looked at). */
  queue: string;
  /** Invocation ids of the calls in live jobs. */
  live: () => Promise<Set<string>>;
  /** Enqueues the call again (ids only: the worker reads the rest from its stored request). */
  ring: (call: { tenantId: string; agentId: string; invocationId: string }) => Promise<void>;
};

export type ReconcileOptions = {
  /** A pending row younger than this is left to the proxy's own enqueue. */
  pendingGraceMs: number;
  /** A transactional running row is overdue after GW_JOB_LOCK_MS + GW_TRANSACT_TIMEOUT_MS + slack. */
  runningDeadlineMs: number;
  /**
   * Whether a call may run again after its worker died (idempotent MCP methods only), from the
   * protocol its stored request names (null: no stored request).
   */
  mayRepeat: (call: { protocol: string | null; mcpMethod: string | null }) => boolean;
  /** Rows looked at per pass. */
  batch?: number;
};

export type ReconcileReport = { enqueued: number; failed: number; requeued: number; streamsEnded: number };

/**
 * One pass of the reconciler and the sweeper (docs/reliability.md), idempotent: any number of
 * replicas may run it at once (each step is a conditional write, and a call delivered twice runs
 * once: only one delivery claims it); the lease only saves the duplicate work.
 *
 * - `pending` transactional rows older than the grace that no live job carries are enqueued again,
 *   if their stored request exists (Redis lost the job, or the proxy never managed to enqueue).
 * - overdue `running` transactional rows (their worker died and no redelivery ended them) are
 *   re-queued when the call is safe to repeat, else ended `failed`/`internal`.
 * - `running` streaming rows whose process stopped beating are ended `failed`/`internal`.
 */
export async function reconcileOnce(
  deps: { store: Pick<Store, "query">; invocations: Lifecycle; doorbell: Doorbell },
  opts: ReconcileOptions,
  now = new Date(),
): Promise<ReconcileReport> {
  const { store, invocations, doorbell } = deps;
  const batch = opts.batch ?? 500;
  const report: ReconcileReport = { enqueued: 0, failed: 0, requeued: 0, streamsEnded: 0 };

  const overdue = new Date(now.getTime() - opts.runningDeadlineMs);
  for (const row of await overdueRunning(store.query, overdue, batch)) {
    if (opts.mayRepeat(row)) {
      if (await requeueRunning(store.query, row.tenantId, row.id, overdue)) report.requeued++;
    } else if (await invocations.failIfOpen(row)) report.failed++;
  }

  const grace = new Date(now.getTime() - opts.pendingGraceMs);
  // Re-queued rows are pending again at once: they are looked at in this same pass.
  const pending = await stalePending(
    store.query,
    doorbell.queue,
    report.requeued > 0 ? now : grace,
    batch,
    // Re-queued rows were inserted long ago; a late-committed one is left to its proxy (ADR 0020).
    opts.pendingGraceMs,
  );
  // The live jobs are read once per pass, and only when some pending row is old enough to doubt.
  const live = pending.length > 0 ? await doorbell.live() : new Set<string>();
  for (const row of pending) {
    if (live.has(row.id)) continue;
    // Re-read just before ringing: a worker may have claimed it since the list was read.
    if ((await statusOf(store.query, row.tenantId, row.id)) !== "pending") continue;
    if (!(await hasRequest(store.query, row.tenantId, row.id))) {
      // Nothing to run the call from (a row from before requests were stored): end it.
      if (await invocations.failIfOpen(row)) report.failed++;
      continue;
    }
    await doorbell.ring({ tenantId: row.tenantId, agentId: row.agentId, invocationId: row.id });
    report.enqueued++;
  }

  const dead = new Date(now.getTime() - DEAD_AFTER_MS);
  for (const row of await orphanStreams(store.query, dead, dead, batch)) {
    if (await invocations.failIfOpen(row)) report.streamsEnded++;
  }
  return report;
}

/** Purges stored requests of terminal invocations and long-gone processes (maintenance). */
export async function purgeStoredRequests(store: Pick<Store, "query">): Promise<number> {
  const n = await purgeRequests(store.query, 5_000);
  await forgetInstances(store.query);
  return n;
}

/** Takes the named lease for `ms` if nobody else holds it (see `takeLease`). */
export function holdLease(store: Pick<Store, "query">, name: string, holder: string, ms: number) {
  return takeLease(store.query, name, holder, ms);
}
