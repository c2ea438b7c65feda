// @stores once: the in-process list cache.
import { startUpstream, type TestApp } from "@gw/testkit";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { type Caller, caller, startGateway } from "../helpers.ts";
import { catalogWhen, closeAll, closers, mcpAgent } from "./support.ts";

// A caller's next filtered tools/list of the same answer is spliced from the last one (docs/tools.md
// "Per-caller tool lists"): what it gets must be exactly what a full filter would give, and a new
// policy, another caller or a catalog change must never be answered from an older list.

let gw: TestApp;
beforeAll(async () => {
  gw = await startGateway();
});
afterEach(closeAll);
afterAll(async () => {
  await gw?.close();
});

const TOOLS = ["a", "admin_b", "c"].map((name) => `{"name":"${name}","inputSchema":{"type":"object"}}`);
/** The upstream's answer to request `id`, with the id before or after the result. */
const answer = (id: unknown, tools: string[], idFirst: boolean) =>
  idFirst
    ? `{"jsonrpc":"2.0","id":${JSON.stringify(id)},"result":{"tools":[${tools.join(",")}]}}`
    : `{"jsonrpc":"2.0","result":{"tools":[${tools.join(",")}]},"id":${JSON.stringify(id)}}`;

async function agentOf(call: Caller, idFirst = false) {
  const up = await startUpstream((_req, res, body) => {
    const { id } = JSON.parse(body.toString()) as { id: unknown };
    res.writeHead(200, { "content-type": "application/json" }).end(answer(id, TOOLS, idFirst));
  });
  closers.push(up.close);
  return mcpAgent(call, up.url);
}

async function list(call: Caller, agentId: string, id: unknown) {
  const res = await call(
    "POST",
    `/v1/proxy/${agentId}/stream`,
    { jsonrpc: "2.0", id, method: "tools/list" },
    { accept: "application/json, text/event-stream" },
  );
  expect(res.status).toBe(200);
  expect(res.headers.get("content-length")).toBe(String(Buffer.byteLength(res.text)));
  return res.text;
}

const kept = (...names: string[]) => TOOLS.filter((t) => names.some((n) => t.includes(`"${n}"`)));

describe("remembered tool lists", () => {
  it("the same caller's next lists carry their own id and the same filtered tools (id after or before)", async () => {
    for (const idFirst of [false, true]) {
      const call = await caller(gw);
      const agentId = await agentOf(call, idFirst);
      await call("PUT", "/v1/policy", { rules: [{ action: "deny", match: { tools: ["admin_*"] } }] });
      for (const id of [1, 22, "x-3", 4444, "x-3"]) {
        expect(await list(call, agentId, id)).toBe(answer(id, kept("a", "c"), idFirst));
      }
    }
  });

  it("a new policy is applied on the very next list", async () => {
    const call = await caller(gw);
    const agentId = await agentOf(call);
    await call("PUT", "/v1/policy", { rules: [{ action: "deny", match: { tools: ["admin_*"] } }] });
    expect(await list(call, agentId, 1)).toBe(answer(1, kept("a", "c"), false));
    expect(await list(call, agentId, 2)).toBe(answer(2, kept("a", "c"), false));
    await call("PUT", "/v1/policy", { rules: [{ action: "deny", match: { tools: ["c"] } }] });
    expect(await list(call, agentId, 3)).toBe(answer(3, kept("a", "admin_b"), false));
    await call("PUT", "/v1/policy", { default: "allow" });
    expect(await list(call, agentId, 4)).toBe(answer(4, TOOLS, false));
  });

  it("callers whose attributes the policy reads each get their own list, alternating", async () => {
    const call = await caller(gw);
    const admin = await caller(gw, ["admin"], call.tenant);
    const agentId = await agentOf(call);
    await call("PUT", "/v1/policy", {
      rules: [{ action: "deny", match: { tools: ["admin_*"] }, when: '!("admin" in principal.scopes)' }],
    });
    for (let i = 0; i < 2; i++) {
      expect(await list(call, agentId, 10 + i)).toBe(answer(10 + i, kept("a", "c"), false));
      expect(await list(admin, agentId, 20 + i)).toBe(answer(20 + i, TOOLS, false));
    }
  });

  it("a catalog change (a pin) changes the next list of a policy that reads tool_status", async () => {
    const call = await caller(gw);
    const agentId = await agentOf(call);
    await call("PUT", "/v1/policy", {
      rules: [{ action: "deny", match: { tool_status: ["unpinned", "unknown", "drifted"] } }],
    });
    expect(await list(call, agentId, 1)).toBe(answer(1, [], false));
    await catalogWhen(call, agentId, (r) => r.json.data?.length === 3);
    expect(await list(call, agentId, 2)).toBe(answer(2, [], false));
    expect((await call("POST", `/v1/agents/${agentId}/tools/pin`, { tools: ["a"] })).status).toBe(200);
    expect(await list(call, agentId, 3)).toBe(answer(3, kept("a"), false));
    expect(await list(call, agentId, 4)).toBe(answer(4, kept("a"), false));
  });
});
