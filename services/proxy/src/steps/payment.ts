import type { Call } from "../call.ts";
import type { ProxyDeps } from "../deps.ts";

/**
 * Step 7: x402 for priced agents (challenge, local verification, the nonce as a reservation).
 * Passes every call through until payments land.
 */
export async function checkPayment(call: Call, _deps: ProxyDeps): Promise<Call> {
  return call;
}
