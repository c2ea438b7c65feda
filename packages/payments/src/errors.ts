import { DomainError } from "@gw/core";

/**
 * Every way a payment header can be wrong gives this one answer: a caller learns nothing about
 * which check failed (nor whether a nonce was already seen) from the response.
 */
export const paymentFailed = () => new DomainError("payment_required", "payment verification failed");

/** A tenant with a facilitator on a deployment without settle-then-forward: refuse, never serve unpaid. */
export const settlementUnavailable = () => new DomainError("unavailable", "settlement unavailable");
