// @stores once: the A2A protocol: refused bodies, decided before the store.
import { type A2aUpstream, startA2aUpstream, startUpstream, type TestApp, type Upstream } from "@gw/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Caller, caller, createAgent, pollDone, recordDone } from "../helpers.ts";
import { rpc, startA2aGateway, V1, V03 } from "./helpers.ts";

// What the gateway refuses or guards on an A2A agent's two proxy paths: bodies that are not one
// JSON-RPC request, push notification webhooks at addresses it would never dial, another tenant's
// agent, retries of anything but a read, and an upstream that breaks off mid-event.

let gw: TestApp;
let call: Caller;
let up: A2aUpstream;
let agentId: string;
let flaky: A2aUpstream;
let flakyAgent: string;
let broken: Upstream;
let brokenAgent: string;

beforeAll(async () => {
  gw = await startA2aGateway();
  call = await caller(gw);
  up = await startA2aUpstream();
  agentId = await createAgent(call, { upstream_url: up.url, protocol: "a2a" });
  flaky = await startA2aUpstream({ failFirst: { GetTask: 1, "tasks/get": 1, SendMessage: 1 } });
  flakyAgent = await createAgent(call, { upstream_url: flaky.url, protocol: "a2a" });
  // An upstream whose SSE answer ends in the middle of its second event.
  broken = await startUpstream((_req, res) => {
    res.writeHead(200, { "content-type": "text/event-stream" });
    res.write(
      'data: {"jsonrpc":"2.0","id":1,"result":{"task":{"id":"t-1","contextId":"c-1","status":{"state":"TASK_STATE_WORKING"}}}}\n\n',
    );
    res.end(
      'data: {"jsonrpc":"2.0","id":1,"result":{"statusUpdate":{"taskId":"t-1","status":{"state":"TASK_ST',
    );
  });
  brokenAgent = await createAgent(call, { upstream_url: broken.url, protocol: "a2a" });
});
afterAll(async () => {
  await up?.close();
  await flaky?.close();
  await broken?.close();
  await gw?.close();
});

const stream = (id: string, body: string, headers: Record<string, string> = V1) =>
  call("POST", `/v1/proxy/${id}/stream`, body, headers);
const transact = (id: string, body: string, headers: Record<string, string> = V1) =>
  call("POST", `/v1/proxy/${id}`, body, headers);

async function invocationCount(id = agentId): Promise<number> {
  const res = await call("GET", `/v1/invocations?agent_id=${id}&limit=100`);
  return res.json.total as number;
}

describe("bodies that are not one JSON-RPC request", () => {
  const cases: Array<[string, string, string]> = [
    ["not JSON", "hello", "A2A request body must be a JSON-RPC 2.0 request in valid JSON"],
    ["a batch", `[${rpc("GetTask", { id: "x" })}]`, "JSON-RPC batches are not supported"],
    ["a notification", JSON.stringify({ jsonrpc: "2.0", method: "SendMessage", params: {} }), "with an id"],
    [
      "positional params",
      JSON.stringify({ jsonrpc: "2.0", id: 1, method: "GetTask", params: [1] }),
      "params",
    ],
    ["not JSON-RPC 2.0", JSON.stringify({ id: 1, method: "GetTask" }), "jsonrpc"],
  ];
  it.each(cases)(
    "refuses %s with a 400 on both paths, forwarding and recording nothing",
    async (_n, body, msg) => {
      const before = up.requests.length;
      const count = await invocationCount();
      for (const res of [await stream(agentId, body), await transact(agentId, body)]) {
        expect(res.status).toBe(400);
        expect(res.json.error).toContain(msg);
      }
      expect(up.requests.length).toBe(before);
      expect(await invocationCount()).toBe(count);
    },
  );
});

describe("push notification webhooks", () => {
  const metadata = "http://169.254.169.254/latest/meta-data/";
  const cases: Array<[string, string, Record<string, string>]> = [
    ["a v1.0 config", rpc("CreateTaskPushNotificationConfig", { taskId: "t", url: metadata }), V1],
    [
      "a v0.3 config",
      rpc("tasks/pushNotificationConfig/set", { taskId: "t", pushNotificationConfig: { url: metadata } }),
      V03,
    ],
    [
      "a message's send configuration",
      rpc("SendMessage", {
        message: { messageId: "m", role: "ROLE_USER", parts: [{ text: "x" }] },
        configuration: { taskPushNotificationConfig: { url: "http://[::ffff:169.254.169.254]/hook" } },
      }),
      V1,
    ],
  ];
  it.each(cases)(
    "refuses a metadata address in %s: 400, nothing forwarded, no invocation",
    async (_n, body, h) => {
      const before = up.requests.length;
      const count = await invocationCount();
      for (const res of [await stream(agentId, body, h), await transact(agentId, body, h)]) {
        expect(res.status).toBe(400);
        expect(res.json.error).toMatch(/^push notification url is not allowed \(.+\)$/);
      }
      expect(up.requests.length).toBe(before);
      expect(await invocationCount()).toBe(count);
    },
  );

  it("forwards a webhook at an allowed address", async () => {
    const sent = await stream(
      agentId,
      rpc("SendMessage", { message: { messageId: "p", role: "ROLE_USER", parts: [{ text: "x" }] } }),
    );
    const taskId = sent.json.result.task.id as string;
    const res = await stream(
      agentId,
      rpc("CreateTaskPushNotificationConfig", { taskId, url: "http://127.0.0.1:9/hook", id: "cfg-1" }),
    );
    expect(res.status).toBe(200);
    expect(res.json.result.url).toBe("http://127.0.0.1:9/hook");
    const inv = await recordDone(call, res.headers.get("x-gateway-invocation-id") as string);
    expect(inv.json).toMatchObject({ a2a_method: "CreateTaskPushNotificationConfig", a2a_task_id: taskId });
  });
});

describe("retries", () => {
  it("retries a read (GetTask, v0.3 tasks/get) on a 503 and never SendMessage", async () => {
    const message = (id: string) => ({
      message: { messageId: id, role: "ROLE_USER", parts: [{ text: "x" }] },
    });
    const sent = await stream(flakyAgent, rpc("SendMessage", message("r")));
    // The first SendMessage met the injected 503, and was not tried again.
    expect(sent.status).toBe(503);
    expect(flaky.calls("SendMessage").length).toBe(1);
    const ok = await stream(flakyAgent, rpc("SendMessage", message("r2")));
    const taskId = ok.json.result.task.id as string;
    const got = await transact(flakyAgent, rpc("GetTask", { id: taskId }));
    const done = await pollDone(call, flakyAgent, got.json.invocation_id as string);
    expect(done.json).toMatchObject({ status: "succeeded", a2a_method: "GetTask", a2a_task_id: taskId });
    expect(flaky.calls("GetTask").length).toBe(2);
    const old = await stream(flakyAgent, rpc("tasks/get", { id: taskId }), V03);
    expect(old.status).toBe(200);
    expect(flaky.calls("tasks/get").length).toBe(2);
  });
});

describe("an upstream that breaks off", () => {
  it("relays what came, learns only from whole events, and records the call", async () => {
    const res = await stream(brokenAgent, rpc("SendStreamingMessage", { message: {} }));
    expect(res.status).toBe(200);
    expect(res.text).toContain('"TASK_STATE_WORKING"');
    const inv = await recordDone(call, res.headers.get("x-gateway-invocation-id") as string);
    expect(inv.json).toMatchObject({
      a2a_task_id: "t-1",
      a2a_context_id: "c-1",
      a2a_task_state: "TASK_STATE_WORKING",
    });
    const accepted = await transact(brokenAgent, rpc("SendStreamingMessage", { message: {} }));
    const done = await pollDone(call, brokenAgent, accepted.json.invocation_id as string);
    expect(done.json).toMatchObject({ status: "succeeded", a2a_task_state: "TASK_STATE_WORKING" });
  });
});

describe("tenancy", () => {
  it("answers 404 for another tenant's A2A agent on every path", async () => {
    const other = await caller(gw);
    const body = rpc("GetTask", { id: "x" });
    expect((await other("POST", `/v1/proxy/${agentId}/stream`, body, V1)).status).toBe(404);
    expect((await other("POST", `/v1/proxy/${agentId}`, body, V1)).status).toBe(404);
    expect((await other("GET", `/v1/proxy/${agentId}/.well-known/agent-card.json`)).status).toBe(404);
    expect((await other("GET", `/v1/agents/${agentId}/card`)).status).toBe(404);
    const list = await other("GET", "/v1/invocations?a2a_task_id=t-1");
    expect(list.json.total).toBe(0);
  });
});
