// @stores once: the MCP protocol through a virtual server.
import type { TestApp } from "@gw/testkit";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { type Caller, caller, startGateway } from "../helpers.ts";
import { connectV2, memberAgent, memberPool, rpc, stream, transact, virtualAgent } from "./fixture.ts";

// Multi-round-trip results, subscriptions and policy through a virtual server.

let gw: TestApp;
let call: Caller;
const pool = memberPool();

beforeAll(async () => {
  gw = await startGateway();
  call = await caller(gw);
});
afterEach(() => pool.closeAll());
afterAll(() => gw?.close());

describe("virtual MCP server: rounds, subscriptions, policy", () => {
  it("passes an input_required result back unchanged and routes the retry again by name", async () => {
    const alpha = await pool.v2("alpha", { confirm: true });
    const beta = await pool.v2("beta", { confirm: true });
    const a = await memberAgent(call, alpha.url);
    const b = await memberAgent(call, beta.url);
    const v = await virtualAgent(call, [
      { agent_id: a, prefix: "a" },
      { agent_id: b, prefix: "b" },
    ]);
    const elicits = { elicitation: { form: {} } };
    const first = await stream(call, v, rpc("tools/call", { name: "b__confirm", arguments: {} }, 1, elicits));
    expect(first.status, first.text).toBe(200);
    expect(first.json.result).toMatchObject({ resultType: "input_required", requestState: "beta-state" });
    expect(first.json.result.inputRequests.confirm).toBeDefined();
    const retry = rpc(
      "tools/call",
      {
        name: "b__confirm",
        arguments: {},
        requestState: first.json.result.requestState,
        inputResponses: { confirm: { action: "accept", content: { confirm: true } } },
      },
      2,
      elicits,
    );
    const second = await stream(call, v, retry);
    expect(second.json.result.content).toEqual([{ type: "text", text: "beta:confirmed" }]);
    // Both rounds reached beta, none alpha.
    expect(beta.requests.filter((r) => r.rpcMethod === "tools/call")).toHaveLength(2);
    expect(alpha.requests.filter((r) => r.rpcMethod === "tools/call")).toHaveLength(0);
    const polled = await transact(call, v, retry);
    expect(polled.body.result.content).toEqual([{ type: "text", text: "beta:confirmed" }]);
  });

  it("merges the members' subscriptions/listen streams into one SSE stream", async () => {
    const alpha = await pool.v2("alpha");
    const beta = await pool.v2("beta");
    const a = await memberAgent(call, alpha.url);
    const b = await memberAgent(call, beta.url);
    const v = await virtualAgent(call, [
      { agent_id: a, prefix: "a" },
      { agent_id: b, prefix: "b" },
    ]);
    const req = rpc("subscriptions/listen", { notifications: { toolsListChanged: true } }, 41);
    const abort = new AbortController();
    const res = await fetch(`${gw.url}/v1/proxy/${v}/stream`, {
      method: "POST",
      headers: { ...req.headers, authorization: `Bearer ${call.token}` },
      body: JSON.stringify(req.body),
      signal: abort.signal,
    });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("text/event-stream");
    const reader = (res.body as ReadableStream<Uint8Array>).getReader();
    const decoder = new TextDecoder();
    let text = "";
    const next = async (until: (t: string) => boolean) => {
      while (!until(text)) {
        const { value, done } = await reader.read();
        if (done) break;
        text += decoder.decode(value);
      }
    };
    await next((t) => t.includes("subscriptions/acknowledged"));
    const acks = text.match(/subscriptions\/acknowledged/g) ?? [];
    expect(acks).toHaveLength(1);
    expect(text).toContain('"io.modelcontextprotocol/subscriptionId":41');
    alpha.handler.notify.toolsChanged();
    beta.handler.notify.toolsChanged();
    await next((t) => (t.match(/tools\/list_changed/g) ?? []).length >= 2);
    expect((text.match(/tools\/list_changed/g) ?? []).length).toBe(2);
    abort.abort();
    await reader.cancel().catch(() => {});
    // The transactional path stores one answer: a subscription is refused there.
    const t = await transact(call, v, req);
    expect(t.body.error).toMatchObject({ code: -32600 });
  });

  it("lets policy and price see the exposed tool name", async () => {
    const alpha = await pool.v2("alpha");
    const a = await memberAgent(call, alpha.url);
    const tenant = await caller(gw);
    const a2 = await memberAgent(tenant, alpha.url);
    const v = await virtualAgent(tenant, [{ agent_id: a2, prefix: "gh" }]);
    expect(a).not.toBe(a2);
    const put = await tenant("PUT", "/v1/policy", {
      default: "allow",
      rules: [{ action: "deny", match: { tools: ["gh__add"] } }],
    });
    expect(put.status).toBe(200);
    const denied = await stream(tenant, v, rpc("tools/call", { name: "gh__add", arguments: {} }));
    expect(denied.status).toBe(403);
    expect(denied.json).toEqual({ error: "denied by policy" });
    const allowed = await stream(
      tenant,
      v,
      rpc("tools/call", { name: "gh__echo", arguments: { text: "k" } }),
    );
    expect(allowed.json.result.content).toEqual([{ type: "text", text: "alpha:echo:k" }]);
    expect(alpha.requests.filter((r) => r.name === "add")).toHaveLength(0);
  });

  it("filters the merged tools/list per caller by the exposed names, on both paths", async () => {
    const alpha = await pool.v2("alpha");
    const beta = await pool.v2("beta");
    const tenant = await caller(gw);
    const v = await virtualAgent(tenant, [
      { agent_id: await memberAgent(tenant, alpha.url), prefix: "a" },
      { agent_id: await memberAgent(tenant, beta.url), prefix: "b" },
    ]);
    const put = await tenant("PUT", "/v1/policy", {
      default: "allow",
      rules: [{ action: "deny", match: { tools: ["b__*", "a__add"] } }],
    });
    expect(put.status).toBe(200);
    const streamed = await stream(tenant, v, rpc("tools/list", {}));
    expect(streamed.status, streamed.text).toBe(200);
    expect(streamed.json.result.tools.map((t: { name: string }) => t.name)).toEqual(["a__echo"]);
    const polled = await transact(tenant, v, rpc("tools/list", {}));
    expect(polled.body.result.tools.map((t: { name: string }) => t.name)).toEqual(["a__echo"]);
  });

  it("lists the exposed tools whose deciding rule is warn or require_approval, omitting only denied ones (official v2 client)", async () => {
    const alpha = await pool.v2("alpha");
    const beta = await pool.v2("beta");
    const tenant = await caller(gw);
    const v = await virtualAgent(tenant, [
      { agent_id: await memberAgent(tenant, alpha.url), prefix: "a" },
      { agent_id: await memberAgent(tenant, beta.url), prefix: "b" },
    ]);
    const put = await tenant("PUT", "/v1/policy", {
      default: "allow",
      rules: [
        { action: "require_approval", match: { tools: ["a__add"] } },
        { action: "warn", match: { tools: ["b__echo"] } },
        { action: "deny", match: { tools: ["b__*"] } },
      ],
    });
    expect(put.status).toBe(200);
    const client = await connectV2(gw, tenant, v);
    pool.add(client);
    const listed = await client.listTools();
    expect(listed.tools.map((t) => t.name)).toEqual(["a__echo", "a__add", "b__echo"]);
    const polled = await transact(tenant, v, rpc("tools/list", {}));
    expect(polled.body.result.tools.map((t: { name: string }) => t.name)).toEqual([
      "a__echo",
      "a__add",
      "b__echo",
    ]);
  });
});
