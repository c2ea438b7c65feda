// x402 inside MCP tool calls (docs/payments.md, MCP tool calls): per-tool prices and the
// transport's shapes (payment in `params._meta`, the payment-required tool result, the settle
// receipt in `result._meta`).

export * from "./admit-tool.ts";
export * from "./tool-prices.ts";
export * from "./transport.ts";
