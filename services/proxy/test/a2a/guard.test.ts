// @stores once: the A2A protocol: answer guardrails.
import type { Task } from "@a2a-js/sdk";
import { type A2aUpstream, startA2aUpstream, type TestApp } from "@gw/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MODES, type Mode, marker, putPolicy } from "../answers/support.ts";
import { type Caller, caller, createAgent, pollDone, recordDone } from "../helpers.ts";
import { a2aClient, rpc, startA2aGateway, userMessage, V1, V03 } from "./helpers.ts";

// Answer guardrails on A2A (docs/policy.md "Answer guardrails", docs/a2a.md): the official SDK's
// echo agent answers the text it is sent as an artifact (and keeps it in the task's history), so
// what the caller sends is what the rules find in the answer.

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

async function tenantWith(answerRules: unknown[]): Promise<{ call: Caller; agentId: string }> {
  const call = await caller(gw, ["invocations:read_body"]);
  if (answerRules.length > 0) await putPolicy(call, { answer_rules: answerRules });
  const agentId = await createAgent(call, { upstream_url: up.url, protocol: "a2a", capture_bodies: true });
  return { call, agentId };
}

type Sent = { status: number; text: string; record: Record<string, unknown> };

/** One JSON-RPC request on either path: the caller's answer (relayed, or the polled result's) and the record. */
async function send(
  call: Caller,
  agentId: string,
  mode: Mode,
  body: string,
  headers: Record<string, string> = V1,
): Promise<Sent> {
  if (mode === "streaming") {
    const res = await call("POST", `/v1/proxy/${agentId}/stream`, body, headers);
    const id = res.headers.get("x-gateway-invocation-id") as string;
    return { status: res.status, text: res.text, record: (await recordDone(call, id)).json };
  }
  const accepted = await call("POST", `/v1/proxy/${agentId}`, body, headers);
  expect(accepted.status, accepted.text).toBe(202);
  const done = await pollDone(call, agentId, accepted.json.invocation_id);
  const b64 = done.json.response?.body_b64 as string;
  return {
    status: done.json.response?.status ?? 0,
    text: Buffer.from(b64, "base64").toString("utf8"),
    record: (await recordDone(call, accepted.json.invocation_id)).json,
  };
}

const sendMessage = (text: string, id: string | number = 1) =>
  rpc("SendMessage", { message: { messageId: marker("m"), role: "ROLE_USER", parts: [{ text }] } }, id);

const captured = (record: Record<string, unknown>) =>
  Buffer.from(String(record.resp_body), "base64").toString("utf8");

describe("answer guardrails on A2A", () => {
  for (const mode of MODES) {
    it(`${mode}: redact rewrites the artifact and history text parts; the stored copy is what the caller got`, async () => {
      const { call, agentId } = await tenantWith([{ detect: { pii: ["email"] }, action: "redact" }]);
      const email = `${marker("bob")}@example.com`;
      const out = await send(call, agentId, mode, sendMessage(`mail ${email} now`));
      expect(out.status).toBe(200);
      const task = JSON.parse(out.text).result.task;
      expect(task.artifacts[0].parts[0].text).toBe("echo: mail [redacted:email] now");
      for (const m of task.history ?? []) for (const p of m.parts) expect(p.text).not.toContain(email);
      expect(task.status.state).toBe("TASK_STATE_COMPLETED");
      expect(out.text).not.toContain(email);
      expect(out.record).toMatchObject({ answer_action: "redacted", a2a_method: "SendMessage" });
      expect((out.record.answer_findings as { email: number }).email).toBeGreaterThanOrEqual(1);
      expect(captured(out.record)).toContain("echo: mail [redacted:email] now");
      expect(captured(out.record)).not.toContain(email);
      // GetTask of the same task is judged too.
      const got = await send(call, agentId, mode, rpc("GetTask", { id: task.id }, "g"));
      expect(JSON.parse(got.text).result.artifacts[0].parts[0].text).toBe("echo: mail [redacted:email] now");
      expect(got.record).toMatchObject({ answer_action: "redacted", a2a_method: "GetTask" });
    });

    it(`${mode}: block answers the -32603 JSON-RPC error with the request's id`, async () => {
      const { call, agentId } = await tenantWith([
        { match: { methods: ["SendMessage"] }, detect: { patterns: ["ticket-[0-9]+"] }, action: "block" },
      ]);
      const out = await send(call, agentId, mode, sendMessage("ticket-42", "req-9"));
      expect(out.status).toBe(200);
      // The message in the task's history and the echoed artifact: two findings.
      expect(JSON.parse(out.text)).toEqual({
        jsonrpc: "2.0",
        id: "req-9",
        error: { code: -32603, message: "blocked by gateway policy" },
      });
      expect(out.record).toMatchObject({ answer_action: "blocked", answer_findings: { pattern: 2 } });
      expect(captured(out.record)).not.toContain("ticket-42");
    });
  }

  it("v0.3 message/send and tasks/get: kind:text parts are redacted", async () => {
    const { call, agentId } = await tenantWith([{ detect: { pii: ["email"] }, action: "redact" }]);
    const email = `${marker("eve")}@example.com`;
    const message = {
      kind: "message",
      messageId: marker("m"),
      role: "user",
      parts: [{ kind: "text", text: email }],
    };
    const out = await send(call, agentId, "streaming", rpc("message/send", { message }, "a"), V03);
    const task = JSON.parse(out.text).result;
    expect(task).toMatchObject({ kind: "task", status: { state: "completed" } });
    expect(task.artifacts[0].parts[0]).toEqual({ kind: "text", text: "echo: [redacted:email]" });
    expect(out.text).not.toContain(email);
    const got = await send(call, agentId, "streaming", rpc("tasks/get", { id: task.id }, "b"), V03);
    expect(JSON.parse(got.text).result.artifacts[0].parts[0].text).toBe("echo: [redacted:email]");
    expect(got.record.answer_action).toBe("redacted");
  });

  it("the official SDK client reads a redacted answer", async () => {
    const { call, agentId } = await tenantWith([{ detect: { pii: ["email"] }, action: "redact" }]);
    const client = await a2aClient(gw, call, agentId);
    const email = `${marker("sdk")}@example.com`;
    const result = (await client.sendMessage({ message: userMessage(`to ${email}`) } as never)) as Task;
    expect(result.artifacts[0]?.parts[0]?.content).toEqual({
      $case: "text",
      value: "echo: to [redacted:email]",
    });
  });

  it("without an answer rule the answer passes verbatim and unrecorded", async () => {
    const plain = await tenantWith([]);
    const email = `${marker("ann")}@example.com`;
    const out = await send(plain.call, plain.agentId, "streaming", sendMessage(email));
    expect(JSON.parse(out.text).result.task.artifacts[0].parts[0].text).toBe(`echo: ${email}`);
    expect(out.record.answer_action).toBeNull();
  });
});
