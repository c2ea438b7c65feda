// @stores both: invocation rows and their reads.
import { startUpstream, type TestApp, type Upstream } from "@gw/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Caller, caller, createAgent, pollDone, recordDone, startGateway } from "./helpers.ts";

let gw: TestApp;
let call: Caller;
let ok: Upstream;
let bad: Upstream;
let agentA: string;
let agentB: string;
const ids: Record<string, string> = {};
let before: string;
let between: string;

beforeAll(async () => {
  gw = await startGateway();
  call = await caller(gw);
  ok = await startUpstream((_req, res) => res.end("ok"));
  bad = await startUpstream((_req, res) => {
    res.writeHead(500);
    res.end();
  });
  agentA = await createAgent(call, { upstream_url: ok.url });
  agentB = await createAgent(call, { upstream_url: bad.url });
  before = new Date(Date.now() - 1000).toISOString();
  // One transactional success, then one streaming failure, then one streaming success.
  const t = await call("POST", `/v1/proxy/${agentA}`, "x");
  ids.txOk = t.json.invocation_id;
  await pollDone(call, agentA, ids.txOk as string);
  await new Promise((r) => setTimeout(r, 20));
  between = new Date().toISOString();
  await new Promise((r) => setTimeout(r, 20));
  const s1 = await call("POST", `/v1/proxy/${agentB}/stream`, "x");
  ids.streamFail = s1.headers.get("x-gateway-invocation-id") as string;
  await recordDone(call, ids.streamFail);
  const s2 = await call("POST", `/v1/proxy/${agentA}/stream`, "x");
  ids.streamOk = s2.headers.get("x-gateway-invocation-id") as string;
  await recordDone(call, ids.streamOk);
});
afterAll(async () => {
  await gw?.close();
  await ok?.close();
  await bad?.close();
});

const listIds = async (query: string) => {
  const res = await call("GET", `/v1/invocations${query}`);
  expect(res.status, query).toBe(200);
  return (res.json.data as Array<{ id: string }>).map((i) => i.id);
};

describe("GET /v1/invocations", () => {
  it("lists the tenant's invocations newest first with the spec's fields and no bodies", async () => {
    const res = await call("GET", "/v1/invocations");
    expect(res.json).toMatchObject({ limit: 20, offset: 0, total: 3 });
    expect(res.json.data.map((i: { id: string }) => i.id)).toEqual([ids.streamOk, ids.streamFail, ids.txOk]);
    const item = res.json.data[0];
    expect(Object.keys(item).sort()).toEqual(
      [
        "id",
        "agent_id",
        "mode",
        "status",
        "error_class",
        "model",
        "mcp_method",
        "mcp_tool",
        "mcp_task_id",
        "mcp_task_status",
        "payment_network",
        "payment_asset",
        "payment_amount",
        "payment_payer",
        "payment_nonce",
        "policy_action",
        "receipt_artifact_id",
        "policy_matched_rule",
        "upstream_status",
        "latency_ms",
        "ttft_ms",
        "req_size",
        "resp_size",
        "routed_agent_id",
        "answer_action",
        "answer_findings",
        "a2a_method",
        "a2a_task_id",
        "a2a_context_id",
        "a2a_task_state",
        "created_at",
        "completed_at",
      ].sort(),
    );
  });

  it("filters by status, mode, agent, and time, inclusively", async () => {
    expect(await listIds("?status=failed")).toEqual([ids.streamFail]);
    expect(await listIds("?status=succeeded")).toEqual([ids.streamOk, ids.txOk]);
    expect(await listIds("?status=pending")).toEqual([]);
    expect(await listIds("?mode=transactional")).toEqual([ids.txOk]);
    expect(await listIds("?mode=streaming&status=succeeded")).toEqual([ids.streamOk]);
    expect(await listIds(`?agent_id=${agentB}`)).toEqual([ids.streamFail]);
    // The agent filter is passed through: an unknown value is no error, just no results.
    expect(await listIds("?agent_id=not-an-agent")).toEqual([]);
    expect(await listIds(`?since=${encodeURIComponent(between)}`)).toEqual([ids.streamOk, ids.streamFail]);
    expect(await listIds(`?until=${encodeURIComponent(between)}`)).toEqual([ids.txOk]);
    expect(await listIds(`?since=${encodeURIComponent(before)}&until=${encodeURIComponent(before)}`)).toEqual(
      [],
    );
    // Rows without a decision or a settlement match neither filter value.
    expect(await listIds("?policy=allow")).toEqual([]);
    expect(await listIds("?settlement=settled")).toEqual([]);
  });

  it("paginates with limit and offset, clamping the limit to 1..100", async () => {
    const page = await call("GET", "/v1/invocations?limit=1&offset=1");
    expect(page.json).toMatchObject({ limit: 1, offset: 1, total: 3 });
    expect(page.json.data.map((i: { id: string }) => i.id)).toEqual([ids.streamFail]);
    expect((await call("GET", "/v1/invocations?limit=500")).json.limit).toBe(100);
    expect((await call("GET", "/v1/invocations?offset=10")).json.data).toEqual([]);
  });

  it.each([
    ["status=done", /status/],
    ["status=denied", /status/],
    ["mode=batch", /mode/],
    ["settlement=paid", /settlement/],
    ["policy=deny", /policy/],
    ["since=yesterday", /since/],
    ["until=2026-13-01T00:00:00Z", /until/],
    ["since=2026-01-01", /since/],
    [
      `since=${encodeURIComponent("2026-02-01T00:00:00Z")}&until=${encodeURIComponent("2026-01-01T00:00:00Z")}`,
      /since/,
    ],
    ["limit=ten", /limit/],
    ["offset=-5", /offset/],
  ])("400 for %s", async (query, message) => {
    const res = await call("GET", `/v1/invocations?${query}`);
    expect(res.status).toBe(400);
    expect(res.json.error).toMatch(message);
  });

  it("reads one invocation with the body-capture flag, 404 for unknown or malformed ids", async () => {
    const one = await call("GET", `/v1/invocations/${ids.txOk}`);
    expect(one.json).toMatchObject({ id: ids.txOk, body_captured: false, status: "succeeded" });
    expect(one.json).not.toHaveProperty("req_body");
    for (const id of ["inv_00000000-0000-7000-8000-000000000000", "nope", agentA]) {
      const res = await call("GET", `/v1/invocations/${id}`);
      expect(res.status).toBe(404);
      expect(res.json).toEqual({ error: "invocation not found" });
    }
  });
});
