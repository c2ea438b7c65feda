import type { Facts } from "@gw/invocations";
import { NOT_FORWARDED, type SettlementFacts, settleCall, settlementFacts } from "@gw/payments";
import type { TransactJob } from "@gw/queue";
import type { WorkerDeps } from "./processor.ts";

export type Paid = { forward: boolean; facts: SettlementFacts };

/** A paid call that ended before settling (its credential failed): nothing settled, nothing forwarded. */
export function notForwarded(job: TransactJob): Facts {
  if (!job.payment?.facilitator) return {};
  return settlementFacts(NOT_FORWARDED)(true);
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
  return { forward: settled.forward, facts: settlementFacts(settled.settlement) };
}
