import type { AgentPrice } from "@gw/db";
import { paymentChallenge, requirementsFor } from "./challenge.ts";
import { decodePayment } from "./decode.ts";
import { settlementUnavailable } from "./errors.ts";
import { type VerifiedPayment, verifyPayment } from "./verify.ts";

/**
 * Pipeline step 7 for one call, framework-free: nothing for an unpriced agent; 503 when the
 * tenant has a facilitator but this deployment cannot settle before forwarding; the 402 challenge
 * when no payment header came; the 402 `payment verification failed` for anything wrong with it.
 * The replay guard is not here: it is the reservation written with the invocation (step 8).
 */
export async function admitPayment(opts: {
  price: AgentPrice | null;
  /** The MCP tool of a tools/call (per-tool price). */
  tool: string | null;
  /** GW_PUBLIC_URL plus the path called. */
  resource: string;
  /** The agent's name. */
  description: string;
  headers: Record<string, string | string[] | undefined>;
  /** The tenant has a settlement configuration. */
  tenantSettles: boolean;
  /** GW_SETTLE_THEN_FORWARD. */
  settleThenForward: boolean;
  now?: number;
}): Promise<VerifiedPayment | null> {
  if (!opts.price) return null;
  // Never serve a paid call unpaid: a payment this deployment cannot settle is refused up front.
  if (opts.tenantSettles && !opts.settleThenForward) throw settlementUnavailable();
  const requirements = requirementsFor({
    price: opts.price,
    tool: opts.tool,
    resource: opts.resource,
    description: opts.description,
  });
  const decoded = decodePayment(opts.headers);
  if (!decoded) throw paymentChallenge(requirements);
  return verifyPayment({
    decoded,
    price: opts.price,
    requirements,
    ...(opts.now !== undefined ? { now: opts.now } : {}),
  });
}
