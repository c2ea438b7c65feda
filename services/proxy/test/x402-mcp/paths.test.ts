// @stores both: settlements and invocation rows are asserted through the store.
import {
  type Facilitator,
  type McpUpstream,
  type McpV2Server,
  mcpInitialize,
  pollDone,
  startFacilitator,
  startMcpUpstream,
  startMcpV2Server,
  type TestApp,
} from "@gw/testkit";
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

// x402 inside MCP tool calls on the transactional path (202 and the poll) and through a virtual
// server (priced by exposed name), with the official clients and the local facilitator.

let gw: TestApp;
let fac: Facilitator;
let upstream: McpUpstream;
let alpha: McpV2Server;
let beta: McpV2Server;
let call: Caller;

const HEADERS = { "content-type": "application/json", accept: "application/json, text/event-stream" };
const PRICE = { tool: "echo", amount: "2000", network: "base-sepolia", pay_to: PAY_TO };

beforeAll(async () => {
  fac = await startFacilitator();
  upstream = await startMcpUpstream();
  alpha = await startMcpV2Server({ name: "alpha" });
  beta = await startMcpV2Server({ name: "beta" });
  gw = await startGateway({ GW_SETTLE_TIMEOUT_MS: "500" });
  call = await caller(gw);
  expect((await call("PUT", "/v1/settlement/config", { facilitator_url: fac.url })).status).toBe(200);
});
afterAll(async () => {
  await gw?.close();
  await Promise.allSettled([upstream?.close(), alpha?.close(), beta?.close(), fac?.close()]);
});

function bodyOf(poll: { json: { response: { body_b64: string } } }): Record<string, unknown> {
  return JSON.parse(Buffer.from(poll.json.response.body_b64, "base64").toString("utf8"));
}

describe("x402 for MCP tool calls, transactional path", () => {
  let agentId: string;
  let session: Record<string, string>;

  async function transact(message: unknown) {
    return call("POST", `/v1/proxy/${agentId}`, JSON.stringify(message), { ...HEADERS, ...session });
  }
  const toolCall = (id: number, meta?: Record<string, unknown>) => ({
    jsonrpc: "2.0",
    id,
    method: "tools/call",
    params: { name: "echo", arguments: { text: "t" }, ...(meta ? { _meta: meta } : {}) },
  });

  beforeAll(async () => {
    agentId = await createAgent(call, { protocol: "mcp", upstream_url: upstream.url, tool_prices: [PRICE] });
    session = {};
    const init = await transact(mcpInitialize("i1"));
    const polled = await pollDone(call, agentId, init.json.invocation_id);
    session = {
      "mcp-session-id": polled.json.response.headers["mcp-session-id"] as string,
      "mcp-protocol-version": "2025-06-18",
    };
    const done = await transact({ jsonrpc: "2.0", method: "notifications/initialized" });
    await pollDone(call, agentId, done.json.invocation_id);
  });

  it("unpaid: answered at once with the payment-required result, no invocation, nothing queued", async () => {
    const before = upstream.posts("tools/call").length;
    const res = await transact(toolCall(5));
    expect(res.status).toBe(200);
    expect(res.headers.get("x-gateway-invocation-id")).toBeNull();
    expect(res.json).toMatchObject({ jsonrpc: "2.0", id: 5 });
    paymentRequiredOf(res.json.result, "payment_required", "echo");
    expect(upstream.posts("tools/call").length).toBe(before);
  });

  it("paid: 202, settled by the worker before the upstream is called, the receipt in the polled result", async () => {
    const payer = payerClient();
    const required = paymentRequiredOf((await transact(toolCall(6))).json.result, "payment_required", "echo");
    const payment = await payer.pay(required);
    const accepted = await transact(toolCall(7, { "x402/payment": payment }));
    expect(accepted.status).toBe(202);
    const polled = await pollDone(call, agentId, accepted.json.invocation_id);
    expect(polled.json).toMatchObject({
      status: "succeeded",
      mcp_tool: "echo",
      settlement: { status: "settled", tx_hash: fac.transactions.at(-1), settled_amount: "2000" },
    });
    const body = bodyOf(polled);
    expect(body).toMatchObject({ id: 7, result: { content: [{ type: "text", text: "t" }] } });
    expect(paymentResponseOf(body.result)).toEqual({
      success: true,
      transaction: fac.transactions.at(-1),
      network: "eip155:84532",
      payer: payer.account.address.toLowerCase(),
    });
    expect(upstream.posts("tools/call").at(-1)?.raw.toString()).not.toContain("x402/payment");

    // Replayed on the transactional path: refused before any invocation.
    const replay = await transact(toolCall(8, { "x402/payment": payment }));
    expect(replay.status).toBe(200);
    paymentRequiredOf(replay.json.result, "invalid_exact_evm_nonce_already_used", "echo");
  });

  it("a settlement that fails: the call fails unsettled and the upstream is never called", async () => {
    const payer = payerClient();
    const required = paymentRequiredOf((await transact(toolCall(9))).json.result, "payment_required", "echo");
    const payment = await payer.pay(required);
    const before = upstream.posts("tools/call").length;
    fac.behaviour = "fail";
    try {
      const accepted = await transact(toolCall(10, { "x402/payment": payment }));
      expect(accepted.status).toBe(202);
      const polled = await pollDone(call, agentId, accepted.json.invocation_id);
      expect(polled.json).toMatchObject({
        status: "failed",
        error_class: null,
        settlement: { status: "settlement_failed", reason: "facilitator_error" },
      });
      // The poll shows the transport's answer: the payment-required result, its receipt failed.
      const answer = bodyOf(polled);
      expect(answer).toMatchObject({ jsonrpc: "2.0", id: 10 });
      paymentRequiredOf(answer.result, "settlement_failed", "echo");
      expect(paymentResponseOf(answer.result)).toMatchObject({
        success: false,
        errorReason: "facilitator_error",
      });
    } finally {
      fac.behaviour = "succeed";
    }
    expect(upstream.posts("tools/call").length).toBe(before);
  });
});

describe("x402 for MCP tool calls through a virtual server", () => {
  it("charges by exposed name; the other member's tool stays free", async () => {
    const a = await createAgent(call, { name: "alpha", protocol: "mcp", upstream_url: alpha.url });
    const b = await createAgent(call, { name: "beta", protocol: "mcp", upstream_url: beta.url });
    const portal = await createAgent(call, {
      name: "portal",
      protocol: "mcp",
      members: [
        { agent_id: a, prefix: "a" },
        { agent_id: b, prefix: "b" },
      ],
      tool_prices: [{ ...PRICE, tool: "a__echo" }],
    });
    const client = await connect(gw, call, portal);
    try {
      const { tools } = await client.listTools();
      const byName = new Map(tools.map((t) => [t.name, t]));
      expect(byName.get("a__echo")?._meta).toMatchObject({
        "x402/price": { amount: "2000", asset: SEPOLIA_USDC, network: "eip155:84532" },
      });
      expect(byName.get("b__echo")?._meta?.["x402/price"]).toBeUndefined();

      const alphaCalls = () => alpha.requests.filter((r) => r.rpcMethod === "tools/call").length;
      const before = alphaCalls();
      const unpaid = await client.callTool({ name: "a__echo", arguments: { text: "v" } });
      const required = paymentRequiredOf(unpaid, "payment_required", "a__echo");
      expect(alphaCalls()).toBe(before);

      const payer = payerClient();
      const payment = await payer.pay(required);
      const paid = await client.callTool({
        name: "a__echo",
        arguments: { text: "v" },
        _meta: { "x402/payment": payment },
      });
      expect(textOf(paid)).toBe("alpha:echo:v");
      expect(paymentResponseOf(paid)).toMatchObject({ success: true, transaction: fac.transactions.at(-1) });
      expect(alphaCalls()).toBe(before + 1);

      const free = await client.callTool({ name: "b__echo", arguments: { text: "w" } });
      expect(textOf(free)).toBe("beta:echo:w");
      expect(paymentResponseOf(free)).toBeUndefined();
    } finally {
      await client.close();
    }
  });
});
