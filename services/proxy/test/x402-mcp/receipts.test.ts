// @stores both: receipts, pins and policy decisions are rows the assertions read back.
import { createHash, generateKeyPairSync } from "node:crypto";
import {
  eventually,
  type Facilitator,
  type McpUpstream,
  mcpInitialize,
  pollDone,
  startFacilitator,
  startMcpUpstream,
  type TestApp,
} from "@gw/testkit";
import { compactVerify, createRemoteJWKSet } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Caller, caller, createAgent, startGateway } from "../helpers.ts";
import { PAY_TO, payerClient, paymentRequiredOf, SEPOLIA_USDC } from "./support.ts";

// A paid tool call's receipt binds the settlement, the tool's pinned digest, the policy decision
// and the answer's digest; policy conditions see the price (`call.price`).

const jwk = generateKeyPairSync("ed25519").privateKey.export({ format: "jwk" });
const sha = (b: Buffer) => `sha256:${createHash("sha256").update(b).digest("hex")}`;
const HEADERS = { "content-type": "application/json", accept: "application/json, text/event-stream" };

let gw: TestApp;
let fac: Facilitator;
let upstream: McpUpstream;
let call: Caller;
let agentId: string;
let session: Record<string, string> = {};

beforeAll(async () => {
  fac = await startFacilitator();
  upstream = await startMcpUpstream();
  gw = await startGateway({
    GW_RECEIPT_SIGNING_KEY: JSON.stringify(jwk),
    GW_RECEIPT_ACTOR: "urn:gw:x402-mcp",
  });
  call = await caller(gw);
  agentId = await createAgent(call, {
    protocol: "mcp",
    upstream_url: upstream.url,
    tool_prices: [
      { tool: "echo", amount: "1000", network: "base-sepolia", pay_to: PAY_TO },
      { tool: "add", amount: "5000", network: "base-sepolia", pay_to: PAY_TO },
    ],
  });
  expect((await call("PUT", "/v1/settlement/config", { facilitator_url: fac.url })).status).toBe(200);
  const policy = await call("PUT", "/v1/policy", {
    default: "allow",
    on_error: "deny",
    rules: [
      {
        action: "deny",
        match: { methods: ["tools/call"] },
        when: "call.price != null && int(call.price.amount) > 1500",
      },
      {
        action: "allow",
        match: { methods: ["tools/call"] },
        when: `call.price != null && call.price.asset == "${SEPOLIA_USDC}" && call.price.network == "eip155:84532"`,
      },
    ],
  });
  expect(policy.status).toBe(200);
  const init = await transact(mcpInitialize("i1"));
  const polled = await pollDone(call, agentId, init.json.invocation_id);
  session = {
    "mcp-session-id": polled.json.response.headers["mcp-session-id"] as string,
    "mcp-protocol-version": "2025-06-18",
  };
  await pollDone(
    call,
    agentId,
    (await transact({ jsonrpc: "2.0", method: "notifications/initialized" })).json.invocation_id,
  );
});
afterAll(async () => {
  await gw?.close();
  await Promise.allSettled([upstream?.close(), fac?.close()]);
});

function transact(message: unknown) {
  return call("POST", `/v1/proxy/${agentId}`, JSON.stringify(message), { ...HEADERS, ...session });
}

describe("x402 over MCP: policy and receipts", () => {
  it("policy sees the price: a tool over the limit is denied before any payment is asked", async () => {
    const res = await transact({
      jsonrpc: "2.0",
      id: 3,
      method: "tools/call",
      params: { name: "add", arguments: { a: 1, b: 2 } },
    });
    expect(res.status).toBe(403);
    expect(res.json).toEqual({ error: "denied by policy" });
  });

  it("the receipt binds the settlement, the pinned digest, the decision and the answer's digest", async () => {
    // Learn and pin the tool, as an operator would after review.
    const listed = await transact({ jsonrpc: "2.0", id: 4, method: "tools/list" });
    await pollDone(call, agentId, listed.json.invocation_id);
    const pinned = await eventually(async () => {
      const r = await call("POST", `/v1/agents/${agentId}/tools/pin`, { tools: ["echo"] });
      return r.status === 200 && (r.json.pinned as string[]).includes("echo") ? r : undefined;
    });
    expect(pinned.status).toBe(200);
    const digest = (await call("GET", `/v1/agents/${agentId}/tools/echo`)).json.pinned_digest as string;
    expect(digest).toMatch(/^sha256:/);

    const unpaid = await transact({
      jsonrpc: "2.0",
      id: 5,
      method: "tools/call",
      params: { name: "echo", arguments: { text: "r" } },
    });
    const required = paymentRequiredOf(unpaid.json.result, "payment_required", "echo");
    const payment = await payerClient().pay(required);
    const accepted = await transact({
      jsonrpc: "2.0",
      id: 6,
      method: "tools/call",
      params: { name: "echo", arguments: { text: "r" }, _meta: { "x402/payment": payment } },
    });
    expect(accepted.status).toBe(202);
    const done = await pollDone(call, agentId, accepted.json.invocation_id);
    expect(done.json).toMatchObject({
      status: "succeeded",
      policy_action: "allow",
      policy_matched_rule: "2",
    });
    const receipt = await eventually(async () => {
      const r = await call("GET", `/v1/invocations/${accepted.json.invocation_id}/receipt`);
      return r.json.attested ? r.json : undefined;
    });
    const keys = createRemoteJWKSet(new URL(`${gw.url}/v1/receipts/jwks`));
    const { payload } = await compactVerify(receipt.jws, keys, { algorithms: ["EdDSA"] });
    const body = JSON.parse(new TextDecoder().decode(payload));
    const decisions = await call("GET", `/v1/policy/decisions?agent_id=${agentId}&limit=100`);
    const decision = (decisions.json.data as Array<{ id: string; mcp_tool: string; action: string }>).find(
      (d) => d.mcp_tool === "echo" && d.action === "allow",
    );
    expect(decision?.id).toMatch(/^pdec_/);
    expect(body).toMatchObject({
      action: "gateway.invocation",
      subject: accepted.json.invocation_id,
      status: "succeeded",
      settlement: { status: "settled", tx_hash: fac.transactions.at(-1) },
      digests: { response: sha(Buffer.from(done.json.response.body_b64, "base64")) },
      binding: {
        tool: { name: "echo", pinned_digest: digest },
        decision: { id: decision?.id, action: "allow", matched_rule: "2" },
      },
    });
    // A free call's receipt binds nothing beyond the usual.
    const free = await transact({ jsonrpc: "2.0", id: 7, method: "ping" });
    await pollDone(call, agentId, free.json.invocation_id);
    const plain = await eventually(async () => {
      const r = await call("GET", `/v1/invocations/${free.json.invocation_id}/receipt`);
      return r.json.attested ? r.json : undefined;
    });
    const plainBody = JSON.parse(new TextDecoder().decode((await compactVerify(plain.jws, keys)).payload));
    expect(plainBody.binding).toBeUndefined();
  });
});
