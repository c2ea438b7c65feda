// @stores both: the replay guard is the store's (one durable statement for concurrent calls' nonces).
import { type McpUpstream, startMcpUpstream, type TestApp } from "@gw/testkit";
import type { PaymentPayload, PaymentRequired } from "@x402/core/types";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Caller, caller, createAgent, startGateway } from "../helpers.ts";
import { connect, PAY_TO, payerClient, paymentRequiredOf, textOf } from "./support.ts";

// A tenant that settles nothing (verification only): a paid call's nonce is taken before the dial
// (ADR 0047), the nonces of concurrent calls in one statement (ADR 0051). Of concurrent calls with
// one authorization exactly one is forwarded; concurrent calls with authorizations of their own
// all are.

let gw: TestApp;
let upstream: McpUpstream;
let call: Caller;
let agentId: string;
let session: Record<string, string>;
let required: PaymentRequired;

beforeAll(async () => {
  upstream = await startMcpUpstream();
  // Twenty-odd calls at once: above the default burst of the rate limit.
  gw = await startGateway({ GW_RATE_LIMIT_RPS: "1000", GW_RATE_LIMIT_BURST: "1000" });
  call = await caller(gw);
  agentId = await createAgent(call, {
    protocol: "mcp",
    upstream_url: upstream.url,
    tool_prices: [{ tool: "echo", amount: "1000", network: "base-sepolia", pay_to: PAY_TO }],
  });
  const client = await connect(gw, call, agentId);
  session = {
    accept: "application/json, text/event-stream",
    "mcp-session-id": (client.transport as { sessionId?: string }).sessionId as string,
    "mcp-protocol-version": "2025-06-18",
  };
  required = paymentRequiredOf(
    await client.callTool({ name: "echo", arguments: { text: "x" } }),
    "payment_required",
    "echo",
  );
});
afterAll(async () => {
  await gw?.close();
  await upstream?.close();
});

/** One tools/call of echo paid with `payment`, as the caller gets it: the tool result. */
async function paidCall(id: number, payment: PaymentPayload) {
  const res = await call(
    "POST",
    `/v1/proxy/${agentId}/stream`,
    {
      jsonrpc: "2.0",
      id,
      method: "tools/call",
      params: { name: "echo", arguments: { text: `c${id}` }, _meta: { "x402/payment": payment } },
    },
    session,
  );
  expect(res.status).toBe(200);
  const message = res.json ?? JSON.parse(res.text.split("data: ")[1] ?? "null");
  return message.result as { isError?: boolean };
}

describe("x402 over MCP, verification only: the replay guard under concurrency", () => {
  it("twelve concurrent calls with one authorization: exactly one forwarded, the rest refused with the reason", async () => {
    const payment = await payerClient().pay(required);
    const before = upstream.posts("tools/call").length;
    const results = await Promise.all(Array.from({ length: 12 }, (_, i) => paidCall(100 + i, payment)));
    const passed = results.filter((r) => !r.isError);
    expect(passed).toHaveLength(1);
    for (const r of results.filter((x) => x.isError))
      paymentRequiredOf(r, "invalid_exact_evm_nonce_already_used", "echo");
    expect(upstream.posts("tools/call").length).toBe(before + 1);
  });

  it("twelve concurrent calls with authorizations of their own: every one forwarded", async () => {
    const payer = payerClient();
    const payments = await Promise.all(Array.from({ length: 12 }, () => payer.pay(required)));
    const before = upstream.posts("tools/call").length;
    const results = await Promise.all(payments.map((p, i) => paidCall(200 + i, p)));
    expect(results.map((r) => textOf(r))).toEqual(payments.map((_, i) => `c${200 + i}`));
    expect(upstream.posts("tools/call").length).toBe(before + 12);
  });
});
