// @stores once: the refusal and the verified-only call are asserted through the API, not the store.
import {
  type Facilitator,
  type McpUpstream,
  recordDone,
  startFacilitator,
  startMcpUpstream,
  type TestApp,
} from "@gw/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { caller, createAgent, startGateway } from "../helpers.ts";
import { connect, PAY_TO, payerClient, paymentRequiredOf, paymentResponseOf, textOf } from "./support.ts";

// A deployment without settle-then-forward: a tenant that settles is refused a paid tool call
// (503, never served unpaid); a tenant that settles nothing has its payments verified only.

let gw: TestApp;
let fac: Facilitator;
let upstream: McpUpstream;
const TOOL_PRICES = [{ tool: "echo", amount: "1000", network: "base-sepolia", pay_to: PAY_TO }];

beforeAll(async () => {
  fac = await startFacilitator();
  upstream = await startMcpUpstream();
  gw = await startGateway({ GW_SETTLE_THEN_FORWARD: "false" });
});
afterAll(async () => {
  await gw?.close();
  await Promise.allSettled([upstream?.close(), fac?.close()]);
});

describe("x402 over MCP without settle-then-forward", () => {
  it("503 for a tenant with a facilitator, nothing forwarded; verified only for a tenant without", async () => {
    const a = await caller(gw);
    const agentA = await createAgent(a, {
      protocol: "mcp",
      upstream_url: upstream.url,
      tool_prices: TOOL_PRICES,
    });
    expect((await a("PUT", "/v1/settlement/config", { facilitator_url: fac.url })).status).toBe(200);
    const clientA = await connect(gw, a, agentA);
    const session = (clientA.transport as { sessionId?: string }).sessionId as string;
    const before = upstream.posts("tools/call").length;
    const res = await a(
      "POST",
      `/v1/proxy/${agentA}/stream`,
      { jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "echo", arguments: { text: "x" } } },
      {
        accept: "application/json, text/event-stream",
        "mcp-session-id": session,
        "mcp-protocol-version": "2025-06-18",
      },
    );
    expect(res.status).toBe(503);
    expect(res.json).toEqual({ error: "settlement unavailable" });
    expect(upstream.posts("tools/call").length).toBe(before);
    // A free tool is not a payment: served.
    expect(textOf(await clientA.callTool({ name: "add", arguments: { a: 1, b: 1 } }))).toBe("2");
    await clientA.close();

    const b = await caller(gw);
    const agentB = await createAgent(b, {
      protocol: "mcp",
      upstream_url: upstream.url,
      tool_prices: TOOL_PRICES,
    });
    const clientB = await connect(gw, b, agentB);
    try {
      const required = paymentRequiredOf(
        await clientB.callTool({ name: "echo", arguments: { text: "v" } }),
        "payment_required",
        "echo",
      );
      const payer = payerClient();
      const paid = await clientB.callTool({
        name: "echo",
        arguments: { text: "v" },
        _meta: { "x402/payment": await payer.pay(required) },
      });
      expect(textOf(paid)).toBe("v");
      // Nothing settled: no receipt to report.
      expect(paymentResponseOf(paid)).toBeUndefined();
      const sent = upstream.posts("tools/call").at(-1);
      const inv = await recordDone(b, sent?.headers["x-gateway-invocation-id"] as string);
      expect(inv.json).toMatchObject({
        payment_amount: "1000",
        payment_payer: payer.account.address.toLowerCase(),
      });
      expect(inv.json.settlement ?? null).toBeNull();
    } finally {
      await clientB.close();
    }
  });
});
