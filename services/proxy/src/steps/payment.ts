import { DomainError, withinDeadline } from "@gw/core";
import { admitPayment, facilitatorOf, paymentNonceReservation } from "@gw/payments";
import { recordPaymentVerification } from "@gw/telemetry";
import type { Call } from "../call.ts";
import type { ProxyDeps } from "../deps.ts";

/**
 * Step 7: x402 for priced agents (docs/payments.md). 503 when the tenant settles but this
 * deployment cannot settle before forwarding; the 402 challenge without a payment header; 402
 * `payment verification failed` for anything wrong with it. A verified payment's (payer, nonce)
 * becomes a reservation that step 8 takes with the invocation: of concurrent calls with one
 * authorization exactly one is admitted.
 */
export async function checkPayment(call: Call, deps: ProxyDeps): Promise<Call> {
  const price = call.agent.price;
  if (!price) return call;
  // Bounded: a stalled store answers the caller 503 in time (docs/reliability.md).
  const facilitator = await withinDeadline(facilitatorOf(deps.store.db, call.tenantId));
  const verified = await admitPayment({
    price,
    tool: call.request?.tool ?? null,
    resource: `${deps.config.publicUrl}${call.path}`,
    description: call.agent.name,
    headers: call.headers,
    tenantSettles: facilitator !== null,
    settleThenForward: deps.features.settlement,
  }).catch((e: unknown) => {
    // A 402 with the challenge is no verification; a refused payment is one that failed.
    if (e instanceof DomainError && e.kind === "payment_required" && e.body === undefined) {
      recordPaymentVerification({ outcome: "invalid" });
    }
    throw e;
  });
  if (!verified) return call;
  recordPaymentVerification({ outcome: "valid" });
  call.payment = { ...verified, facilitator };
  call.reservations.push(paymentNonceReservation(verified));
  return call;
}
