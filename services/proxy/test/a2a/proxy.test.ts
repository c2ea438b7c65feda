// @stores once: the A2A protocol on both paths; the queue is covered by transact.test.ts.
import type { Task } from "@a2a-js/sdk";
import { type A2aUpstream, eventually, startA2aUpstream, type TestApp } from "@gw/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Caller, caller, createAgent, pollDone, recordDone } from "../helpers.ts";
import { a2aClient, rpc, startA2aGateway, userMessage, V1, V03 } from "./helpers.ts";

// A2A through both proxy paths: the official SDK's server (its JSON-RPC handler, v1.0 with the
// v0.3 compatibility layer) as the upstream, the SDK's ClientFactory client reading the card the
// gateway serves, and nothing of ours in between but the real gateway.

let gw: TestApp;
let call: Caller;
let up: A2aUpstream;
let agentId: string;

beforeAll(async () => {
  gw = await startA2aGateway();
  call = await caller(gw);
  up = await startA2aUpstream();
  agentId = await createAgent(call, { upstream_url: up.url, protocol: "a2a" });
});
afterAll(async () => {
  await up?.close();
  await gw?.close();
});

/** The agent's invocations of one task, oldest first, once `count` are terminal. */
function taskInvocations(taskId: string, count: number) {
  return eventually(async () => {
    const res = await call("GET", `/v1/invocations?a2a_task_id=${encodeURIComponent(taskId)}`);
    expect(res.status).toBe(200);
    const rows = res.json.data as Array<Record<string, unknown>>;
    const done = rows.every((r) => r.status === "succeeded" || r.status === "failed");
    return rows.length === count && done ? rows : undefined;
  });
}

describe("A2A on the streaming path, with the SDK client through the gateway's card", () => {
  it("sends a message and records the method, the task, its context and its last state", async () => {
    const client = await a2aClient(gw, call, agentId);
    const result = (await client.sendMessage({ message: userMessage("hello") } as never)) as Task;
    expect(result.artifacts[0]?.parts[0]?.content).toEqual({ $case: "text", value: "echo: hello" });
    // The client called the gateway's interface, and the gateway the upstream, once.
    const sent = up.calls("SendMessage");
    expect(sent.length).toBeGreaterThanOrEqual(1);
    expect(sent.at(-1)?.headers["x-gateway-agent-id"]).toBe(agentId);
    const [row] = await taskInvocations(result.id, 1);
    expect(row).toMatchObject({
      agent_id: agentId,
      mode: "streaming",
      status: "succeeded",
      a2a_method: "SendMessage",
      a2a_task_id: result.id,
      a2a_context_id: result.contextId,
      a2a_task_state: "TASK_STATE_COMPLETED",
      mcp_method: null,
    });
  });

  it("relays a streamed task event by event and learns its final state", async () => {
    const client = await a2aClient(gw, call, agentId);
    const kinds: string[] = [];
    let taskId = "";
    for await (const event of client.sendMessageStream({ message: userMessage("stream me") } as never)) {
      const payload = (event as { payload?: { $case: string; value: { id?: string } } }).payload;
      if (!payload) continue;
      kinds.push(payload.$case);
      if (payload.$case === "task") taskId = payload.value.id ?? "";
    }
    expect(kinds).toEqual(["task", "statusUpdate", "artifactUpdate", "statusUpdate"]);
    const [row] = await taskInvocations(taskId, 1);
    expect(row).toMatchObject({ a2a_method: "SendStreamingMessage", a2a_task_state: "TASK_STATE_COMPLETED" });
  });

  it("keeps every invocation of one task, in order, with the task named by the request", async () => {
    const client = await a2aClient(gw, call, agentId);
    const first = (await client.sendMessage({ message: userMessage("input") } as never)) as Task;
    const second = (await client.sendMessage({
      message: userMessage("more", { taskId: first.id, contextId: first.contextId }),
    } as never)) as Task;
    expect(second.id).toBe(first.id);
    const got = await client.getTask({ id: first.id } as never);
    expect(got.id).toBe(first.id);
    const rows = await taskInvocations(first.id, 3);
    expect(rows.map((r) => r.a2a_method)).toEqual(["SendMessage", "SendMessage", "GetTask"]);
    expect(rows.map((r) => r.a2a_task_state)).toEqual([
      "TASK_STATE_INPUT_REQUIRED",
      "TASK_STATE_COMPLETED",
      "TASK_STATE_COMPLETED",
    ]);
    // Every row shows in the invocation's own read too.
    const single = await call("GET", `/v1/invocations/${rows[2]?.id as string}`);
    expect(single.json).toMatchObject({ a2a_task_id: first.id, a2a_context_id: first.contextId });
  });

  it("speaks v0.3 too: message/send and message/stream pass verbatim and are recorded", async () => {
    const message = {
      kind: "message",
      messageId: "m-03",
      role: "user",
      parts: [{ kind: "text", text: "old" }],
    };
    const res = await fetch(`${gw.url}/v1/proxy/${agentId}/stream`, {
      method: "POST",
      headers: { ...V03, authorization: `Bearer ${call.token}` },
      body: rpc("message/send", { message }, "a"),
    });
    expect(res.status).toBe(200);
    const body = (await res.json()) as { result: { kind: string; id: string; status: { state: string } } };
    expect(body.result).toMatchObject({ kind: "task", status: { state: "completed" } });
    const inv = await recordDone(call, res.headers.get("x-gateway-invocation-id") as string);
    expect(inv.json).toMatchObject({ a2a_method: "message/send", a2a_task_id: body.result.id });
    expect(inv.json.a2a_task_state).toBe("completed");

    const stream = await fetch(`${gw.url}/v1/proxy/${agentId}/stream`, {
      method: "POST",
      headers: { ...V03, authorization: `Bearer ${call.token}` },
      body: rpc("message/stream", { message: { ...message, messageId: "m-03b" } }, "b"),
    });
    expect(stream.headers.get("content-type")).toMatch(/^text\/event-stream/);
    const text = await stream.text();
    expect(text.match(/^data: /gm)).toHaveLength(4);
    const streamed = await recordDone(call, stream.headers.get("x-gateway-invocation-id") as string);
    expect(streamed.json).toMatchObject({ a2a_method: "message/stream", a2a_task_state: "completed" });
  });
});

describe("A2A on the transactional path", () => {
  it("stores a JSON answer for the poll and records what it learned", async () => {
    const accepted = await call(
      "POST",
      `/v1/proxy/${agentId}`,
      rpc("SendMessage", { message: v1Message("tx") }),
      V1,
    );
    expect(accepted.status).toBe(202);
    const done = await pollDone(call, agentId, accepted.json.invocation_id as string);
    expect(done.json).toMatchObject({ status: "succeeded", a2a_method: "SendMessage" });
    const answer = JSON.parse(Buffer.from(done.json.response.body_b64, "base64").toString("utf8"));
    expect(answer.result.task.id).toBe(done.json.a2a_task_id);
    expect(done.json.a2a_task_state).toBe("TASK_STATE_COMPLETED");
  });

  it("collects a streamed answer whole, as the events came", async () => {
    const accepted = await call(
      "POST",
      `/v1/proxy/${agentId}`,
      rpc("SendStreamingMessage", { message: v1Message("tx stream") }),
      V1,
    );
    const done = await pollDone(call, agentId, accepted.json.invocation_id as string);
    expect(done.json.response.headers["content-type"]).toMatch(/^text\/event-stream/);
    const events = Buffer.from(done.json.response.body_b64, "base64").toString("utf8");
    expect(events.match(/^data: /gm)).toHaveLength(4);
    expect(done.json).toMatchObject({
      a2a_method: "SendStreamingMessage",
      a2a_task_state: "TASK_STATE_COMPLETED",
    });
  });
});

it("lists A2A agents by protocol", async () => {
  const other = await createAgent(call, { upstream_url: up.url });
  const res = await call("GET", "/v1/agents?protocol=a2a&limit=100");
  expect(res.status).toBe(200);
  const ids = (res.json.data as Array<{ id: string; protocol: string }>).map((a) => a.id);
  expect(ids).toContain(agentId);
  expect(ids).not.toContain(other);
});

function v1Message(text: string) {
  return { messageId: `m-${Math.random()}`, role: "ROLE_USER", parts: [{ text }] };
}
