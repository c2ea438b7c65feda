import { DomainError } from "@gw/core";
import type { AgentPrice } from "@gw/db";
import { encodePaymentRequiredHeader } from "@x402/core/http";
import type { PaymentRequiredV2, PaymentRequirementsV1, PaymentRequirementsV2 } from "@x402/core/schemas";
import type { PaymentRequired } from "@x402/core/types";
import * as v from "valibot";
import { NETWORKS } from "./networks.ts";
import { amountFor } from "./price.ts";

/** How long a payer may take between the challenge and the paid request (docs/payments.md). */
export const MAX_TIMEOUT_SECONDS = 60;

/** The terms of one call in both protocol generations, built from one price. */
export type Requirements = {
  amount: string;
  resource: string;
  description: string;
  v1: PaymentRequirementsV1;
  v2: PaymentRequirementsV2;
};

/**
 * The payment terms of a call to a priced agent. `resource` is GW_PUBLIC_URL plus the path called;
 * `tool` is the MCP tool of a tools/call (a `price.tools` entry overrides the amount).
 */
export function requirementsFor(opts: {
  price: AgentPrice;
  tool?: string | null;
  resource: string;
  description: string;
}): Requirements {
  const net = NETWORKS[opts.price.network];
  const amount = amountFor(opts.price, opts.tool);
  const extra = { name: net.name, version: net.version };
  return {
    amount,
    resource: opts.resource,
    description: opts.description,
    // Key order follows docs/payments.md so the body reads exactly as documented.
    v1: {
      scheme: "exact",
      network: net.v1,
      maxAmountRequired: amount,
      resource: opts.resource,
      description: opts.description,
      mimeType: "application/json",
      payTo: opts.price.pay_to,
      maxTimeoutSeconds: MAX_TIMEOUT_SECONDS,
      asset: net.asset,
      extra,
    },
    v2: {
      scheme: "exact",
      network: net.caip2,
      amount,
      asset: net.asset,
      payTo: opts.price.pay_to,
      maxTimeoutSeconds: MAX_TIMEOUT_SECONDS,
      extra,
    },
  };
}

/**
 * The x402 v1 challenge (docs/payments.md, What a payer sends): the body of a 402 for a priced agent called
 * without a payment. `challengeBody` is typed by it and the OpenAPI document is generated from it.
 */
export const X402Challenge = v.object({
  x402Version: v.literal(1),
  error: v.string(),
  accepts: v.array(
    v.object({
      // As loose as @x402/core's PaymentRequirementsV1 that builds the entry: "exact", "base"... in practice.
      scheme: v.string(),
      network: v.string(),
      maxAmountRequired: v.pipe(v.string(), v.regex(/^[0-9]+$/)),
      resource: v.string(),
      description: v.string(),
      mimeType: v.optional(v.string()),
      payTo: v.string(),
      maxTimeoutSeconds: v.pipe(v.number(), v.integer()),
      asset: v.string(),
      extra: v.nullish(v.record(v.string(), v.unknown())),
    }),
  ),
});
export type X402ChallengeJson = v.InferOutput<typeof X402Challenge>;

/** The v1 challenge body (docs/payments.md). */
export function challengeBody(req: Requirements): X402ChallengeJson {
  return { x402Version: 1 as const, error: "X-PAYMENT header is required", accepts: [req.v1] };
}

/** The v2 challenge, carried base64 in the `PAYMENT-REQUIRED` header. */
export function challengeV2(req: Requirements): PaymentRequiredV2 {
  return {
    x402Version: 2,
    error: "PAYMENT-SIGNATURE header is required",
    resource: { url: req.resource, description: req.description, mimeType: "application/json" },
    accepts: [req.v2],
  };
}

/**
 * The 402 for a call that carries no payment: the v1 body and the v2 header at once, so both
 * client generations can pay without knowing which one the server speaks.
 */
export function paymentChallenge(req: Requirements): DomainError {
  return new DomainError("payment_required", "payment required", {
    body: challengeBody(req),
    // @x402/core types networks as CAIP-2 template strings; ours are (NETWORKS[..].caip2).
    headers: { "PAYMENT-REQUIRED": encodePaymentRequiredHeader(challengeV2(req) as PaymentRequired) },
  });
}
