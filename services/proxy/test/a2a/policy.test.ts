// @stores once: the A2A protocol: what policy sees of a call.
import { type A2aUpstream, startA2aUpstream, type TestApp, token } from "@gw/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Caller, caller, createAgent } from "../helpers.ts";
import { rpc, startA2aGateway, V1 } from "./helpers.ts";

// Policy sees A2A calls: the protocol, the A2A method names, CEL's call.method and
// agent.protocol, and approvals bound to the canonical params; rate limits apply as to any agent.

let gw: TestApp;
let up: A2aUpstream;

beforeAll(async () => {
  gw = await startA2aGateway();
  up = await startA2aUpstream();
});
afterAll(async () => {
  await up?.close();
  await gw?.close();
});

async function tenantWith(rules: unknown[]): Promise<{ call: Caller; agentId: string }> {
  const call = await caller(gw);
  const agentId = await createAgent(call, { upstream_url: up.url, protocol: "a2a" });
  expect((await call("PUT", "/v1/policy", { default: "allow", rules })).status).toBe(200);
  return { call, agentId };
}

const send = (text: string) =>
  rpc("SendMessage", { message: { messageId: text, role: "ROLE_USER", parts: [{ text }] } });

describe("policy on A2A calls", () => {
  it("matches protocols: [a2a] and A2A method names, and records the decision", async () => {
    const { call, agentId } = await tenantWith([
      { action: "deny", match: { protocols: ["a2a"], methods: ["CancelTask", "tasks/cancel"] } },
    ]);
    const before = up.calls("CancelTask").length;
    const denied = await call("POST", `/v1/proxy/${agentId}/stream`, rpc("CancelTask", { id: "t" }), V1);
    expect(denied.status).toBe(403);
    expect(denied.json).toEqual({ error: "denied by policy" });
    expect(up.calls("CancelTask").length).toBe(before);
    const sent = await call("POST", `/v1/proxy/${agentId}/stream`, send("allowed"), V1);
    expect(sent.status).toBe(200);
    // The allowed stream's decision is written with its record, after the answer.
    await expect
      .poll(async () =>
        (await call("GET", "/v1/policy/decisions")).json.data.map(
          (d: { action: string; protocol: string }) => [d.action, d.protocol],
        ),
      )
      .toEqual([
        ["allow", "a2a"],
        ["deny", "a2a"],
      ]);
  });

  it("evaluates CEL on call.method and agent.protocol", async () => {
    const { call, agentId } = await tenantWith([
      { action: "warn", match: {}, when: 'agent.protocol == "a2a" && call.method == "GetTask"' },
    ]);
    const got = await call("POST", `/v1/proxy/${agentId}/stream`, rpc("GetTask", { id: "nope" }), V1);
    expect(got.headers.get("x-gateway-policy-warning")).toBeTruthy();
    const sent = await call("POST", `/v1/proxy/${agentId}/stream`, send("no warning"), V1);
    expect(sent.headers.get("x-gateway-policy-warning")).toBeNull();
  });

  it("binds require_approval to the canonical params: key order does not matter, content does", async () => {
    const { call, agentId } = await tenantWith([
      { action: "require_approval", match: { protocols: ["a2a"], methods: ["SendMessage"] } },
    ]);
    const message = { messageId: "m-1", role: "ROLE_USER", parts: [{ text: "pay 10" }] };
    const a = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "SendMessage", params: { message } });
    const reordered = JSON.stringify({
      id: 2,
      params: { message: { parts: [{ text: "pay 10" }], role: "ROLE_USER", messageId: "m-1" } },
      method: "SendMessage",
      jsonrpc: "2.0",
    });
    const first = await call("POST", `/v1/proxy/${agentId}/stream`, a, V1);
    expect(first.status).toBe(403);
    expect(first.json.error).toBe("approval required");
    const again = await call("POST", `/v1/proxy/${agentId}/stream`, reordered, V1);
    expect(again.json.approval_id).toBe(first.json.approval_id);
    const other = await call("POST", `/v1/proxy/${agentId}/stream`, send("pay 1000"), V1);
    expect(other.json.approval_id).not.toBe(first.json.approval_id);
    const approval = await call("GET", `/v1/approvals/${first.json.approval_id}`);
    expect(approval.json).toMatchObject({ mcp_method: "SendMessage", status: "pending" });
    expect(approval.json.arguments).toEqual({ message });
    const approver = await token(call.tenant, "bob", ["approvals:decide"]);
    const decided = await fetch(`${gw.url}/v1/approvals/${first.json.approval_id}/approve`, {
      method: "POST",
      headers: { authorization: `Bearer ${approver}`, "content-type": "application/json" },
      body: "{}",
    });
    expect(decided.status).toBe(200);
    const passed = await call("POST", `/v1/proxy/${agentId}/stream`, reordered, V1);
    expect(passed.status).toBe(200);
    expect(passed.json.result.task.artifacts[0].parts[0].text).toBe("echo: pay 10");
  });

  it("applies the agent's rate limit", async () => {
    const call = await caller(gw);
    const agentId = await createAgent(call, {
      upstream_url: up.url,
      protocol: "a2a",
      rate_limit: { rps: 0.001, burst: 1 },
    });
    expect((await call("POST", `/v1/proxy/${agentId}/stream`, send("one"), V1)).status).toBe(200);
    const limited = await call("POST", `/v1/proxy/${agentId}/stream`, send("two"), V1);
    expect(limited.status).toBe(429);
    expect(limited.headers.get("retry-after")).toBeTruthy();
  });
});
