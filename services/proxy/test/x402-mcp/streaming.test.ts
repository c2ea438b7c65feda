// @stores both: settlements, replay reservations and invocation rows are asserted through the store.
import {
  type Facilitator,
  type McpUpstream,
  recordDone,
  startFacilitator,
  startMcpUpstream,
  type TestApp,
} from "@gw/testkit";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Caller, caller, createAgent, startGateway } from "../helpers.ts";
import {
  connect,
  PAY_TO,
  payerClient,
  paymentRequiredOf,
  paymentResponseOf,
  SEPOLIA_USDC,
  textOf,
} from "./support.ts";

// x402 inside MCP tool calls on the streaming path: the official MCP SDK client and server, the
// official @x402 client building every payment, the local facilitator settling.

let gw: TestApp;
let fac: Facilitator;
let upstream: McpUpstream;
let call: Caller;
let agentId: string;
let client: Client;

const TOOL_PRICES = [
  { tool: "echo", amount: "1000", network: "base-sepolia", pay_to: PAY_TO, description: "Echo, paid" },
  { tool: "log_*", amount: "500", network: "eip155:84532", pay_to: PAY_TO },
];

beforeAll(async () => {
  fac = await startFacilitator();
  upstream = await startMcpUpstream();
  gw = await startGateway({ GW_SETTLE_TIMEOUT_MS: "500" });
  call = await caller(gw);
  agentId = await createAgent(call, {
    protocol: "mcp",
    upstream_url: upstream.url,
    tool_prices: TOOL_PRICES,
  });
  expect((await call("PUT", "/v1/settlement/config", { facilitator_url: fac.url })).status).toBe(200);
  client = await connect(gw, call, agentId);
});
afterAll(async () => {
  await client?.close();
  await gw?.close();
  await upstream?.close();
  await fac?.close();
});

const toolCalls = () => upstream.posts("tools/call").length;
/** The agent's tools/call invocations (the client's GET stream and session calls are others). */
const invocationTotal = async () => {
  const res = await call("GET", `/v1/invocations?agent_id=${agentId}&limit=100`);
  return (res.json.data as Array<{ mcp_method: string | null }>).filter((r) => r.mcp_method === "tools/call")
    .length;
};

async function unpaid(tool: string, args: Record<string, unknown>) {
  return client.callTool({ name: tool, arguments: args });
}

describe("x402 for MCP tool calls, streaming path", () => {
  it("lists each priced tool with its price in _meta, unpriced tools untouched", async () => {
    const { tools } = await client.listTools();
    const byName = new Map(tools.map((t) => [t.name, t]));
    expect(byName.get("echo")?._meta).toEqual({
      "x402/price": { amount: "1000", asset: SEPOLIA_USDC, network: "eip155:84532" },
    });
    expect(byName.get("log_echo")?._meta).toEqual({
      "x402/price": { amount: "500", asset: SEPOLIA_USDC, network: "eip155:84532" },
    });
    expect(byName.get("add")?._meta).toBeUndefined();
    expect(byName.get("echo")?.description).toBe("Returns its text");
  });

  it("unpaid: the payment-required result, nothing forwarded, no invocation", async () => {
    const [calls, total] = [toolCalls(), await invocationTotal()];
    const result = await unpaid("echo", { text: "hi" });
    const required = paymentRequiredOf(result, "payment_required", "echo");
    expect(required.resource.description).toBe("Echo, paid");
    expect(required.accepts[0]).toMatchObject({ amount: "1000", extra: { name: "USDC", version: "2" } });
    expect(toolCalls()).toBe(calls);
    expect(await invocationTotal()).toBe(total);
  });

  it("paid: verified, settled, forwarded without the payment, the settle receipt in _meta", async () => {
    const payer = payerClient();
    const required = paymentRequiredOf(await unpaid("echo", { text: "paid" }), "payment_required", "echo");
    const payment = await payer.pay(required);
    const hits = fac.hits;
    const result = await client.callTool({
      name: "echo",
      arguments: { text: "paid" },
      _meta: { "x402/payment": payment },
    });
    expect(result.isError).toBeFalsy();
    expect(textOf(result)).toBe("paid");
    expect(fac.hits).toBe(hits + 1);
    expect(paymentResponseOf(result)).toEqual({
      success: true,
      transaction: fac.transactions.at(-1),
      network: "eip155:84532",
      payer: payer.account.address.toLowerCase(),
    });
    // The upstream got the call, never the payer's signed authorization.
    const sent = upstream.posts("tools/call").at(-1);
    expect(sent?.raw.toString()).not.toContain("x402/payment");
    expect(sent?.raw.toString()).not.toContain(payment.payload.signature as string);
    const inv = await recordDone(call, sent?.headers["x-gateway-invocation-id"] as string);
    expect(inv.json).toMatchObject({
      status: "succeeded",
      mcp_tool: "echo",
      payment_amount: "1000",
      payment_payer: payer.account.address.toLowerCase(),
      settlement: { status: "settled", tx_hash: fac.transactions.at(-1), settled_amount: "1000" },
    });

    // The same authorization again: refused with the reason, nothing forwarded or settled.
    const calls = toolCalls();
    const again = await client.callTool({
      name: "echo",
      arguments: { text: "paid" },
      _meta: { "x402/payment": payment },
    });
    paymentRequiredOf(again, "invalid_exact_evm_nonce_already_used", "echo");
    expect(toolCalls()).toBe(calls);
    expect(fac.hits).toBe(hits + 1);
  });

  it("refuses underpaid, wrong asset, network, payTo and expired payments with the reason", async () => {
    const payer = payerClient({ anyAsset: true });
    const required = paymentRequiredOf(await unpaid("echo", { text: "x" }), "payment_required", "echo");
    const cases: Array<[string, (a: Record<string, unknown>) => void]> = [
      ["invalid_exact_evm_payload_authorization_value", (a) => (a.amount = "999")],
      ["invalid_asset", (a) => (a.asset = "0x1111111111111111111111111111111111111111")],
      ["invalid_network", (a) => (a.network = "eip155:8453")],
      [
        "invalid_exact_evm_payload_recipient_mismatch",
        (a) => (a.payTo = "0x6666666666666666666666666666666666666666"),
      ],
    ];
    const [calls, hits, total] = [toolCalls(), fac.hits, await invocationTotal()];
    for (const [reason, change] of cases) {
      const payment = await payer.pay(required, change);
      const result = await client.callTool({
        name: "echo",
        arguments: { text: "x" },
        _meta: { "x402/payment": payment },
      });
      paymentRequiredOf(result, reason, "echo");
    }
    // The official client signs validBefore = now + maxTimeoutSeconds: one second, then expired.
    const expiring = await payer.pay(required, (a) => (a.maxTimeoutSeconds = 1));
    const validBefore = Number((expiring.payload.authorization as { validBefore: string }).validBefore);
    await new Promise<void>((resolve) => {
      const tick = () => (Date.now() / 1000 >= validBefore + 1 ? resolve() : setTimeout(tick, 100));
      tick();
    });
    const expired = await client.callTool({
      name: "echo",
      arguments: { text: "x" },
      _meta: { "x402/payment": expiring },
    });
    paymentRequiredOf(expired, "invalid_exact_evm_payload_authorization_valid_before", "echo");
    // A payment that is no x402 v2 payload at all.
    const junk = await client.callTool({
      name: "echo",
      arguments: { text: "x" },
      _meta: { "x402/payment": { x402Version: 2 } },
    });
    paymentRequiredOf(junk, "invalid_payload", "echo");
    expect(toolCalls()).toBe(calls);
    expect(fac.hits).toBe(hits);
    expect(await invocationTotal()).toBe(total);
  });

  it("an unpriced tool is free: forwarded, no payment recorded", async () => {
    const result = await client.callTool({ name: "add", arguments: { a: 2, b: 3 } });
    expect(textOf(result)).toBe("5");
    expect(result._meta).toBeUndefined();
    const sent = upstream.posts("tools/call").at(-1);
    const inv = await recordDone(call, sent?.headers["x-gateway-invocation-id"] as string);
    expect(inv.json).toMatchObject({ mcp_tool: "add", payment_amount: null, payment_payer: null });
    expect(inv.json.settlement ?? null).toBeNull();
  });

  it("a settlement that fails: the payment-required result with a failed receipt, nothing forwarded", async () => {
    const payer = payerClient();
    const required = paymentRequiredOf(await unpaid("echo", { text: "f" }), "payment_required", "echo");
    const payment = await payer.pay(required);
    fac.behaviour = "reject";
    const calls = toolCalls();
    try {
      const result = await client.callTool({
        name: "echo",
        arguments: { text: "f" },
        _meta: { "x402/payment": payment },
      });
      paymentRequiredOf(result, "settlement_failed", "echo");
      expect(paymentResponseOf(result)).toEqual({
        success: false,
        transaction: "",
        network: "eip155:84532",
        payer: payer.account.address.toLowerCase(),
        errorReason: "payment_rejected",
      });
      expect(JSON.stringify(result)).not.toContain(fac.marker);
    } finally {
      fac.behaviour = "succeed";
    }
    expect(toolCalls()).toBe(calls);
    // The failure's outcome is written after the answer (batched): wait for it to be listed.
    let list = await call("GET", `/v1/invocations?agent_id=${agentId}&settlement=settlement_failed`);
    for (const until = Date.now() + 20_000; list.json.data.length === 0 && Date.now() < until; ) {
      await new Promise((r) => setTimeout(r, 25));
      list = await call("GET", `/v1/invocations?agent_id=${agentId}&settlement=settlement_failed`);
    }
    expect(list.json.data[0]).toMatchObject({
      status: "failed",
      mcp_tool: "echo",
      settlement: { status: "settlement_failed", reason: "payment_rejected" },
    });
  });

  it("an SSE answer: earlier events pass verbatim, only the final response carries _meta", async () => {
    const payer = payerClient();
    const required = paymentRequiredOf(
      await unpaid("log_echo", { text: "sse" }),
      "payment_required",
      "log_echo",
    );
    expect(required.accepts[0]?.amount).toBe("500");
    const payment = await payer.pay(required);
    // A raw POST in the client's session, to see the stream's bytes.
    const session = (client.transport as { sessionId?: string }).sessionId as string;
    const res = await fetch(`${gw.url}/v1/proxy/${agentId}/stream`, {
      method: "POST",
      headers: {
        authorization: `Bearer ${call.token}`,
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
        "mcp-session-id": session,
        "mcp-protocol-version": "2025-06-18",
      },
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: 77,
        method: "tools/call",
        params: { name: "log_echo", arguments: { text: "sse" }, _meta: { "x402/payment": payment } },
      }),
    });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/text\/event-stream/);
    const text = await res.text();
    const events = text.split(/\n\n/).filter((e) => e.trim() !== "");
    expect(events).toHaveLength(2);
    // The notification ahead of the result: exactly as the server wrote it.
    const notification = JSON.parse((events[0] as string).replace(/^[\s\S]*?data: /, ""));
    expect(notification).toMatchObject({
      method: "notifications/message",
      params: { data: "echoing 3 characters" },
    });
    expect(events[0]).toBe(
      'event: message\ndata: {"method":"notifications/message","params":{"level":"info","data":"echoing 3 characters"},"jsonrpc":"2.0"}',
    );
    const response = JSON.parse((events[1] as string).replace(/^[\s\S]*?data: /, ""));
    expect(response).toMatchObject({
      id: 77,
      result: {
        content: [{ type: "text", text: "sse" }],
        _meta: { "x402/payment-response": { success: true, transaction: fac.transactions.at(-1) } },
      },
    });
  });
});
