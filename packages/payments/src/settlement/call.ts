import { DomainError } from "@gw/core";
import type { Db, Settlement } from "@gw/db";
import { recordPaymentSettlement } from "@gw/telemetry";
import type { Keyring } from "@gw/vault";
import type { Dispatcher } from "undici";
import type { ToolPayment } from "../mcp/transport.ts";
import type { VerifiedPayment } from "../verify.ts";
import { type FacilitatorRef, settleWithFacilitator } from "./facilitator.ts";
import { paymentResponseHeader, settlementOf, upstreamFailed } from "./settlement.ts";

export type SettleDeps = {
  db: Db;
  keyring: Keyring;
  /** The runtime's SSRF-guarded dispatcher. */
  dispatcher: Dispatcher;
  timeoutMs?: number;
  backoffMs?: number;
};

/**
 * A verified payment as the pipeline carries it: with the tenant's facilitator at admission, and,
 * for a priced MCP tool call, the tool it paid for (its receipt then goes in the result's `_meta`).
 */
export type AdmittedPayment = VerifiedPayment & { facilitator: FacilitatorRef | null; tool?: ToolPayment };

/**
 * The settle half of step 9 (the forward step, packages/forward, runs it for both modes). A payment admitted
 * without a facilitator settles nothing (it was verified; `settlement` stays absent). Otherwise the
 * facilitator is called and its answer becomes the settlement object; `forward` is false when it
 * failed (the upstream must then not be called), and `headers` holds the settle receipt for the
 * caller on success.
 */
async function settleCall(
  deps: SettleDeps,
  tenantId: string,
  payment: AdmittedPayment,
): Promise<{ forward: boolean; settlement: Settlement | null; headers: Record<string, string> }> {
  const { facilitator } = payment;
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
  recordPaymentSettlement({ outcome: outcome.ok ? "settled" : "failed" });
  if (!outcome.ok) return { forward: false, settlement, headers: {} };
  return { forward: true, settlement, headers: paymentResponseHeader(payment, outcome) };
}

/** The settlement fields of a call's terminal write; `ok` is whether the upstream call succeeded. */
export type SettlementFacts = (ok: boolean) => { settlement?: Settlement; settlementStatus?: string };

/** The settlement as the call ended: settled stays settled only when the upstream call succeeded. */
export function settlementFacts(settlement: Settlement | null): SettlementFacts {
  return (ok) => {
    if (!settlement) return {};
    const s = ok ? settlement : upstreamFailed(settlement);
    return { settlement: s, settlementStatus: s.status };
  };
}

/** A paid call that ended before settling (its credential failed): nothing settled or forwarded. */
export const NOT_FORWARDED: Settlement = {
  status: "settlement_failed",
  attempts: 0,
  reason: "call_not_forwarded",
};

/** A call's settlement as step 9 left it: whether it may be forwarded, and the facts it adds to the record. */
export type Settled = { forward: boolean; facts: SettlementFacts };

/** An unpriced call, or one whose payment is only verified: forwarded, no settlement facts. */
export const UNSETTLED: Settled = Object.freeze({ forward: true, facts: () => ({}) });

/**
 * A call that ends before settling (its credential could not be opened): when its tenant settles,
 * nothing was settled and nothing forwarded, and its pending settlement must not stay pending.
 */
export function notForwarded(payment: AdmittedPayment | null | undefined): Settled {
  if (!payment?.facilitator) return UNSETTLED;
  return { forward: false, facts: settlementFacts(NOT_FORWARDED) };
}

/** Settles a call's payment before it is forwarded (nothing to do for an unpriced call). */
export async function settleForForward(
  deps: SettleDeps,
  tenantId: string,
  payment: AdmittedPayment | null | undefined,
): Promise<Settled & { headers: Record<string, string> }> {
  if (!payment) return { ...UNSETTLED, headers: {} };
  const settled = await settleCall(deps, tenantId, payment);
  return { forward: settled.forward, facts: settlementFacts(settled.settlement), headers: settled.headers };
}

/** The facilitator refused or could not settle: the upstream was not called (402). */
export const settlementFailed = (headers: Record<string, string>) =>
  new DomainError("payment_required", "settlement failed", { headers });
