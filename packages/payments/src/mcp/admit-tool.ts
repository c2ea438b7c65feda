import { decodePaymentObject } from "../decode.ts";
import { settlementUnavailable } from "../errors.ts";
import { checkPayment, type VerifiedPayment } from "../verify.ts";
import type { ToolPriceTable } from "./tool-prices.ts";
import { PAYMENT_REQUIRED, type ToolPayment, toolPaymentRefused, toolRequirements } from "./transport.ts";

/**
 * Step 7 for an MCP agent with per-tool prices (docs/payments.md, MCP tool calls): nothing for a
 * free tool; 503 as on the HTTP path when the tenant settles and this deployment cannot; the
 * payment-required tool result when `params._meta["x402/payment"]` is absent or fails the HTTP
 * path's checks (its `error` names the reason). The replay guard is step 8's, as on the HTTP path.
 */
export async function admitToolPayment(opts: {
  table: ToolPriceTable;
  /** The exposed name of a tools/call (null: not a tool call, nothing to pay). */
  tool: string | null;
  requestId: string | number | null;
  /** `params._meta["x402/payment"]` as parsed; undefined when absent. */
  payment: unknown;
  tenantSettles: boolean;
  settleThenForward: boolean;
  now?: number;
}): Promise<(VerifiedPayment & { tool: ToolPayment }) | null> {
  const terms = opts.tool === null ? null : opts.table.match(opts.tool);
  if (terms === null || opts.tool === null) return null;
  if (opts.tenantSettles && !opts.settleThenForward) throw settlementUnavailable();
  const req = toolRequirements(terms, opts.tool);
  if (opts.payment === undefined) throw toolPaymentRefused(opts.requestId, req, PAYMENT_REQUIRED);
  const decoded = decodePaymentObject(opts.payment);
  if (decoded === null) {
    const version =
      typeof opts.payment === "object" && opts.payment !== null
        ? (opts.payment as { x402Version?: unknown }).x402Version
        : undefined;
    throw toolPaymentRefused(opts.requestId, req, version === 2 ? "invalid_payload" : "invalid_x402_version");
  }
  const checked = await checkPayment({
    decoded,
    price: terms.price,
    requirements: req,
    ...(opts.now !== undefined ? { now: opts.now } : {}),
  });
  if (typeof checked === "string") throw toolPaymentRefused(opts.requestId, req, checked);
  return { ...checked, tool: { name: opts.tool, description: req.description } };
}
