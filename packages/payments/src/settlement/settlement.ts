import type { Settlement } from "@gw/db";

export type { Settlement };

import { encodePaymentResponseHeader } from "@x402/core/http";
import { NETWORKS } from "../networks.ts";
import type { VerifiedPayment } from "../verify.ts";
import type { SettleOutcome } from "./settle.ts";

/** The settlement object (spec 2.4) of a paid call before the facilitator answered. */
export const pendingSettlement = (): Settlement => ({ status: "pending" });

/**
 * The settlement object after the facilitator answered. Settled: the authorized value is what
 * moved; the operator receives it less the facilitator's fee (absent when it reports none).
 * Failed: attempts and a coarse reason only.
 */
export function settlementOf(outcome: SettleOutcome, payment: VerifiedPayment, at = new Date()): Settlement {
  if (!outcome.ok) return { status: "settlement_failed", attempts: outcome.attempts, reason: outcome.reason };
  const settled = BigInt(payment.amount);
  const fee = outcome.fee === undefined ? undefined : BigInt(outcome.fee);
  return {
    status: "settled",
    tx_hash: outcome.transaction,
    settled_amount: settled.toString(),
    operator_amount: (settled - (fee ?? 0n)).toString(),
    ...(fee === undefined ? {} : { facilitator_fee: fee.toString() }),
    attempts: outcome.attempts,
    settled_at: at.toISOString(),
  };
}

/** Paid and settled, but the upstream then failed: the payer's money moved, the call did not succeed. */
export function upstreamFailed(s: Settlement): Settlement {
  return s.status === "settled" ? { ...s, status: "settled_upstream_failed" } : s;
}

/**
 * The settle receipt for the caller: `X-PAYMENT-RESPONSE` (v1) or `PAYMENT-RESPONSE` (v2), base64
 * `{success, transaction, network, payer}` built from checked values only.
 */
export function paymentResponseHeader(
  payment: VerifiedPayment,
  outcome: Extract<SettleOutcome, { ok: true }>,
): Record<string, string> {
  const net = NETWORKS[payment.network];
  const value = encodePaymentResponseHeader({
    success: true,
    transaction: outcome.transaction,
    network: payment.version === 1 ? net.v1 : net.caip2,
    payer: payment.payer,
  } as Parameters<typeof encodePaymentResponseHeader>[0]);
  return payment.version === 1 ? { "X-PAYMENT-RESPONSE": value } : { "PAYMENT-RESPONSE": value };
}
