import { DomainError } from "@gw/core";
import {
  admitPayment,
  admitToolPayment,
  paymentNonceReservation,
  type ToolPriceTable,
  toolPriceTable,
  X402_PAYMENT_META,
} from "@gw/payments";
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
  // An MCP agent with per-tool prices charges per tool only; its price gives the defaults.
  const table = call.agent.protocol === "mcp" ? toolPriceTable(call.agent) : null;
  if (table) return checkToolPayment(call, deps, table);
  const price = call.agent.price;
  if (!price) return call;
  const facilitator = await deps.facilitators(call.tenantId);
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

/**
 * Step 7 for an MCP agent with per-tool prices (docs/payments.md, MCP tool calls): a tools/call of
 * a priced exposed name pays in `params._meta["x402/payment"]`; without one, or with one that fails
 * the HTTP path's checks, the caller gets the payment-required tool result (HTTP 200, no
 * invocation). A verified payment is taken out of the forwarded body, as the HTTP path never
 * forwards its payment headers.
 */
async function checkToolPayment(call: Call, deps: ProxyDeps, table: ToolPriceTable): Promise<Call> {
  const request = call.request;
  if (request?.method !== "tools/call" || !request.tool || table.match(request.tool) === null) return call;
  const facilitator = await deps.facilitators(call.tenantId);
  const verified = await admitToolPayment({
    table,
    tool: request.tool,
    requestId: request.id,
    payment: request.payment,
    tenantSettles: facilitator !== null,
    settleThenForward: deps.features.settlement,
  }).catch((e: unknown) => {
    if (e instanceof DomainError && e.kind === "payment_required" && request.payment !== undefined) {
      recordPaymentVerification({ outcome: "invalid" });
    }
    throw e;
  });
  if (!verified) return call;
  recordPaymentVerification({ outcome: "valid" });
  // What the receipt binds: the tool's pinned digest now, and the decision that let the call through.
  // The catalog's read is bounded by the store's deadline already (a cached view in the steady state).
  verified.tool.pinnedDigest = await deps.pinnedDigest(call.tenantId, call.agent.id, request.tool);
  const d = call.decision;
  verified.tool.decision = d ? { id: d.id, action: d.action, matched_rule: d.matchedRule } : null;
  call.payment = { ...verified, facilitator };
  call.reservations.push(paymentNonceReservation(verified));
  if (call.forward) call.forward = withoutPayment(call.forward);
  return call;
}

/** The tools/call as forwarded: `params._meta["x402/payment"]` removed (an empty `_meta` too). */
function withoutPayment(body: Buffer): Buffer {
  const msg = JSON.parse(body.toString("utf8")) as { params: { _meta: Record<string, unknown> } };
  const meta = msg.params._meta;
  delete meta[X402_PAYMENT_META];
  if (Object.keys(meta).length === 0) delete (msg.params as { _meta?: unknown })._meta;
  return Buffer.from(JSON.stringify(msg));
}
