import {
  type AdmittedPayment,
  NOT_FORWARDED,
  type SettlementFacts,
  settleCall,
  settlementFacts,
} from "@gw/payments";
import type { Call } from "./call.ts";
import type { ProxyDeps } from "./deps.ts";

/** A call's settlement as step 9 left it, and the facts it adds to the invocation's last write. */
export type Settled = { forward: boolean; facts: SettlementFacts };

export const settle = {
  /**
   * Before settling: a paid call that ends now (its credential could not be opened) was never
   * forwarded, so nothing was settled and its pending settlement must not stay pending.
   */
  notForwarded(payment: AdmittedPayment | null): Settled {
    if (!payment?.facilitator) return { forward: true, facts: () => ({}) };
    return { forward: false, facts: settlementFacts(NOT_FORWARDED) };
  },

  /** Settles the call's payment with its tenant's facilitator (nothing when it has none). */
  async call(call: Call, deps: ProxyDeps): Promise<Settled> {
    if (!call.payment) return { forward: true, facts: () => ({}) };
    const settled = await settleCall(
      {
        db: deps.store.db,
        keyring: deps.keyring,
        dispatcher: deps.dispatcher,
        timeoutMs: deps.config.GW_SETTLE_TIMEOUT_MS,
      },
      call.tenantId,
      call.payment,
    );
    Object.assign(call.responseHeaders, settled.headers);
    return { forward: settled.forward, facts: settlementFacts(settled.settlement) };
  },
};
