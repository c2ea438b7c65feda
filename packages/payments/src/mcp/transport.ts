import { DomainError } from "@gw/core";
import type { AgentPrice, AgentToolPrice } from "@gw/db";
import type { PaymentRequiredV2 } from "@x402/core/schemas";
import { type Requirements, requirementsFor } from "../challenge.ts";
import { NETWORKS } from "../networks.ts";
import { amountFor } from "../price.ts";
import type { VerifiedPayment } from "../verify.ts";
import { type ToolTerms, toolPriceTable } from "./tool-prices.ts";

/** The `_meta` keys of the x402 MCP transport (x402 v2). */
export const X402_PAYMENT_META = "x402/payment";
export const X402_PAYMENT_RESPONSE_META = "x402/payment-response";
export const X402_PRICE_META = "x402/price";
/** The JSON-RPC code the transport's `x402/error` wrapper carries. */
export const X402_PAYMENT_REQUIRED_CODE = 402;

/** The `error` of a payment-required result for a call that carried no payment. */
export const PAYMENT_REQUIRED = "payment_required";

/**
 * An MCP tool payment: the exposed name it paid for and how the tool is described to payers; the
 * payment step adds what its receipt binds (the tool's pinned digest, the policy decision).
 */
export type ToolPayment = {
  name: string;
  description: string;
  pinnedDigest?: string | null;
  decision?: { id: string; action: string; matched_rule: string } | null;
};

/** The settle receipt as the transport returns it (`SettleResponse`). */
export type PaymentResponse = {
  success: boolean;
  transaction: string;
  network: string;
  payer: string;
  errorReason?: string;
};

/** `mcp://tool/<exposed name>`: the resource a tool's payment is for. */
export const toolResource = (name: string) => `mcp://tool/${name}`;

/** The terms of one call of a priced tool, in both generations (only v2 is offered over MCP). */
export function toolRequirements(terms: ToolTerms, name: string): Requirements {
  return requirementsFor({
    price: terms.price,
    resource: toolResource(name),
    description: terms.description ?? `Tool: ${name}`,
  });
}

/** What `tools/list` shows of a priced tool: `_meta["x402/price"]` in v2 forms. */
export function priceMeta(terms: ToolTerms): { amount: string; asset: string; network: string } {
  const net = NETWORKS[terms.price.network];
  return { amount: terms.price.amount, asset: net.asset, network: net.caip2 };
}

/** What a payment-required result offers: the tool's resource, its description, the v2 terms. */
export type ToolOffer = Pick<Requirements, "resource" | "description" | "v2">;

/** The offer a verified tool payment was made against (to refuse it after admission). */
export function offerOf(payment: VerifiedPayment & { tool: ToolPayment }): ToolOffer | null {
  if (payment.version !== 2) return null;
  return {
    resource: toolResource(payment.tool.name),
    description: payment.tool.description,
    v2: payment.paymentRequirements,
  };
}

/**
 * What a call costs, as policy conditions see it (`call.price`): a priced MCP tool's terms, else
 * the agent's price (per tool when `price.tools` names it), in v2 forms; null when the call is free.
 * An agent with per-tool prices charges nothing else.
 */
export function callPrice(
  agent: { protocol: string; price: AgentPrice | null; toolPrices: AgentToolPrice[] | null },
  tool: string | null,
): { amount: string; asset: string; network: string } | null {
  const table = agent.protocol === "mcp" ? toolPriceTable(agent) : null;
  if (table) {
    const terms = tool === null ? null : table.match(tool);
    return terms ? priceMeta(terms) : null;
  }
  if (!agent.price) return null;
  return priceMeta({ price: { ...agent.price, amount: amountFor(agent.price, tool) }, description: null });
}

/** The transport's `PaymentRequired` object for a tool. */
export function toolPaymentRequired(req: ToolOffer, error: string): PaymentRequiredV2 {
  return {
    x402Version: 2,
    error,
    resource: { url: req.resource, description: req.description, mimeType: "application/json" },
    accepts: [req.v2],
  };
}

/**
 * The payment-required tool result (a JSON-RPC response with the request's id): `isError`,
 * `structuredContent` the `PaymentRequired` object, `content[0].text` the `x402/error` wrapper
 * (code 402) for clients that read text only, and, after a failed settlement, the settle response
 * in `_meta`.
 */
export function paymentRequiredResponse(
  id: string | number | null,
  required: PaymentRequiredV2,
  response?: PaymentResponse,
): Record<string, unknown> {
  const wrapper = {
    "x402/error": { code: X402_PAYMENT_REQUIRED_CODE, message: required.error, data: required },
  };
  const result: Record<string, unknown> = {
    isError: true,
    structuredContent: required,
    content: [{ type: "text", text: JSON.stringify(wrapper) }],
  };
  if (response) result._meta = { [X402_PAYMENT_RESPONSE_META]: response };
  return { jsonrpc: "2.0", id, result };
}

/**
 * The refusal of a priced tool call, as MCP's transport answers it: HTTP 200 with the
 * payment-required result. Thrown like the HTTP path's 402 (nothing forwarded, no invocation).
 */
export function toolPaymentRefused(
  id: string | number | null,
  req: ToolOffer,
  error: string,
  response?: PaymentResponse,
  headers?: Record<string, string>,
): DomainError {
  return new DomainError("payment_required", error, {
    status: 200,
    ...(headers ? { headers } : {}),
    body: paymentRequiredResponse(id, toolPaymentRequired(req, error), response),
  });
}

/** The settle receipt of a settled tool payment (checked values only). */
export function settledResponse(payment: VerifiedPayment, transaction: string): PaymentResponse {
  return { success: true, transaction, network: NETWORKS[payment.network].caip2, payer: payment.payer };
}

/** The settle response of a failed settlement: no transaction, the coarse reason. */
export function unsettledResponse(payment: VerifiedPayment, reason: string): PaymentResponse {
  return {
    success: false,
    transaction: "",
    network: NETWORKS[payment.network].caip2,
    payer: payment.payer,
    errorReason: reason,
  };
}
