import type { Facts } from "@gw/invocations";
import { type Settlement, settleCall, upstreamFailed } from "@gw/payments";
import type { TransactJob } from "@gw/queue";
import type { WorkerDeps } from "./processor.ts";

export type Paid = {
  forward: boolean;
  /** The settlement fields of the terminal write; `ok` is whether the upstream call succeeded. */
  facts: (ok: boolean) => Facts;
};

const factsOf =
  (settlement: Settlement | null) =>
  (ok: boolean): Facts => {
    if (!settlement) return {};
    const s = ok ? settlement : upstreamFailed(settlement);
    return { settlement: s, settlementStatus: s.status };
  };

/** A paid call that ended before settling (its credential failed): nothing settled, nothing forwarded. */
export function notForwarded(job: TransactJob): Facts {
  if (!job.payment?.facilitator) return {};
  return factsOf({ status: "settlement_failed", attempts: 0, reason: "call_not_forwarded" })(true);
}

/**
 * The worker's settle step: a job with a payment its tenant settles calls the facilitator first;
 * `forward` is false when settlement failed (the upstream is then never called).
 */
export async function settlePaid(job: TransactJob, deps: WorkerDeps): Promise<Paid> {
  if (!job.payment) return { forward: true, facts: () => ({}) };
  const settled = await settleCall(
    {
      db: deps.store.db,
      keyring: deps.keyring,
      dispatcher: deps.dispatcher,
      timeoutMs: deps.config.GW_SETTLE_TIMEOUT_MS,
    },
    job.tenantId,
    job.payment,
  );
  return { forward: settled.forward, facts: factsOf(settled.settlement) };
}
