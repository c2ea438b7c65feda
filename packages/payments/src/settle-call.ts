import type { Db, Settlement } from "@gw/db";
import type { Keyring } from "@gw/vault";
import type { Dispatcher } from "undici";
import { facilitatorOf, settleWithFacilitator } from "./facilitator.ts";
import { paymentResponseHeader, settlementOf } from "./settlement.ts";
import type { VerifiedPayment } from "./verify.ts";

export type SettleDeps = {
  db: Db;
  keyring: Keyring;
  /** The runtime's SSRF-guarded dispatcher. */
  dispatcher: Dispatcher;
  timeoutMs?: number;
  backoffMs?: number;
};

/**
 * The settle half of step 9, shared by the streaming route and the worker. A tenant without a
 * facilitator settles nothing (the payment was verified; `settlement` stays absent). Otherwise the
 * facilitator is called once per call and the answer becomes the settlement object; `forward` is
 * false when it failed (the upstream must then not be called), and `headers` holds the settle
 * receipt for the caller on success.
 */
export async function settleCall(
  deps: SettleDeps,
  tenantId: string,
  payment: VerifiedPayment,
): Promise<{ forward: boolean; settlement: Settlement | null; headers: Record<string, string> }> {
  const facilitator = await facilitatorOf(deps.db, tenantId);
  if (!facilitator) return { forward: true, settlement: null, headers: {} };
  const outcome = await settleWithFacilitator({
    db: deps.db,
    keyring: deps.keyring,
    dispatcher: deps.dispatcher,
    tenantId,
    facilitator,
    payment,
    ...(deps.timeoutMs !== undefined ? { timeoutMs: deps.timeoutMs } : {}),
    ...(deps.backoffMs !== undefined ? { backoffMs: deps.backoffMs } : {}),
  });
  const settlement = settlementOf(outcome, payment);
  if (!outcome.ok) return { forward: false, settlement, headers: {} };
  return { forward: true, settlement, headers: paymentResponseHeader(payment, outcome) };
}
