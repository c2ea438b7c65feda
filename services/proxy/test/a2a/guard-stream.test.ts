// @stores once: the A2A protocol: answer guardrails on streams.
import { type A2aUpstream, startA2aUpstream, type TestApp } from "@gw/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MODES, marker, putPolicy } from "../answers/support.ts";
import { type Caller, caller, createAgent } from "../helpers.ts";
import { rpc, startA2aGateway, V03 } from "./helpers.ts";
import { BLOCKED, captured, events, stream, streamMessage } from "./stream-support.ts";

// Answer guardrails on A2A streams (docs/policy.md "Answer guardrails", ADR 0035): every event of
// the official SDK's stream is judged as it passes, on both paths. The echo agent streams the
// task (its history holds the message sent), a working status, the artifact `echo: <text>`, and
// the final status.

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

const artifactText = (e: Record<string, unknown>) =>
  (e as { result: { artifactUpdate: { artifact: { parts: Array<{ text: string }> } } } }).result
    .artifactUpdate.artifact.parts[0]?.text;

describe("answer guardrails on A2A streams", () => {
  for (const mode of MODES) {
    it(`${mode}: redact rewrites the streamed artifact and the task's history; stored copies are what the caller got`, async () => {
      const { call, agentId } = await tenantWith([{ detect: { pii: ["email"] }, action: "redact" }]);
      const email = `${marker("bob")}@example.com`;
      const out = await stream(call, agentId, mode, streamMessage(`mail ${email} now`, "s-1"));
      expect(out.status).toBe(200);
      expect(out.text).not.toContain(email);
      const all = events(out.text);
      expect(all.length).toBeGreaterThanOrEqual(4);
      for (const e of all) expect(e).toMatchObject({ jsonrpc: "2.0", id: "s-1" });
      const artifact = all.find((e) => (e.result as Record<string, unknown>)?.artifactUpdate);
      expect(artifact && artifactText(artifact)).toBe("echo: mail [redacted:email] now");
      const task = all[0] as { result: { task: { history: Array<{ parts: Array<{ text: string }> }> } } };
      expect(task.result.task.history[0]?.parts[0]?.text).toBe("mail [redacted:email] now");
      expect(all.at(-1)).toMatchObject({
        result: { statusUpdate: { status: { state: "TASK_STATE_COMPLETED" } } },
      });
      expect(out.record).toMatchObject({ answer_action: "redacted", a2a_method: "SendStreamingMessage" });
      // The history's message and the artifact, in two events: the findings add up.
      expect(out.record.answer_findings).toEqual({ email: 2 });
      expect(captured(out.record)).toContain("echo: mail [redacted:email] now");
      // The request (captured too) holds the address; the stored result never does.
      const results = (text: string) =>
        gw.rt.store.query(
          `select count(*)::int as n from invocation_results t where t.tenant_id = $1 and t::text like $2`,
          [call.tenant, `%${Buffer.from(text).toString("hex")}%`],
        );
      expect((await results(email))[0]?.n).toBe(0);
      expect((await results("[redacted:email]"))[0]?.n).toBe(mode === "transactional" ? 1 : 0);
    });

    it(`${mode}: block mid-stream relays the events before it, then the -32603 error event, and ends`, async () => {
      const { call, agentId } = await tenantWith([
        {
          match: { methods: ["SendStreamingMessage"] },
          detect: { patterns: ["echo: ticket-[0-9]+"] },
          action: "block",
        },
      ]);
      const out = await stream(call, agentId, mode, streamMessage("ticket-42", 9));
      expect(out.status).toBe(200);
      const all = events(out.text);
      // The task and the working status pass (no finding), the artifact is replaced, the final status never comes.
      expect(all).toHaveLength(3);
      expect(all[0]).toMatchObject({ id: 9, result: { task: {} } });
      expect(all[1]).toMatchObject({
        id: 9,
        result: { statusUpdate: { status: { state: "TASK_STATE_WORKING" } } },
      });
      expect(all[2]).toEqual(BLOCKED(9));
      expect(out.text).not.toContain("echo: ticket-42");
      expect(out.record).toMatchObject({ answer_action: "blocked", answer_findings: { pattern: 1 } });
      expect(captured(out.record)).not.toContain("echo: ticket-42");
    });

    it(`${mode}: warn passes every event and records the warning (no header: it left before the first event)`, async () => {
      const { call, agentId } = await tenantWith([{ detect: { pii: ["email"] }, action: "warn" }]);
      const email = `${marker("wes")}@example.com`;
      const out = await stream(call, agentId, mode, streamMessage(email));
      expect(
        artifactText(
          events(out.text).find((e) => (e.result as Record<string, unknown>)?.artifactUpdate) ?? {},
        ),
      ).toBe(`echo: ${email}`);
      expect(out.headers?.get("x-gateway-policy-warning") ?? null).toBeNull();
      expect(out.record).toMatchObject({ answer_action: "warned", answer_findings: { email: 2 } });
    });
  }

  it("the strongest action of the stream wins: a warned event, then a redacted one", async () => {
    const { call, agentId } = await tenantWith([
      { detect: { patterns: ["echo: [a-z]+-[0-9]+"] }, action: "redact" },
      { detect: { patterns: ["wx-[0-9]+"] }, action: "warn" },
    ]);
    const out = await stream(call, agentId, "streaming", streamMessage("wx-7"));
    // The task's history (wx-7) warns; the artifact (echo: wx-7) is redacted.
    expect(out.text).toContain('"wx-7"');
    expect(out.text).not.toContain("echo: wx-7");
    expect(out.record).toMatchObject({ answer_action: "redacted", answer_findings: { pattern: 2 } });
  });

  it("v0.3 message/stream: kind:text parts are redacted in each event", async () => {
    const { call, agentId } = await tenantWith([{ detect: { pii: ["email"] }, action: "redact" }]);
    const email = `${marker("eve")}@example.com`;
    const message = {
      kind: "message",
      messageId: marker("m"),
      role: "user",
      parts: [{ kind: "text", text: email }],
    };
    const out = await stream(call, agentId, "streaming", rpc("message/stream", { message }, "v"), V03);
    expect(out.text).not.toContain(email);
    const artifact = events(out.text).find(
      (e) => (e.result as { kind?: string })?.kind === "artifact-update",
    ) as {
      result: { artifact: { parts: unknown[] } };
    };
    expect(artifact.result.artifact.parts[0]).toEqual({ kind: "text", text: "echo: [redacted:email]" });
    expect(out.record).toMatchObject({ answer_action: "redacted", a2a_method: "message/stream" });
  });

  it("a rule that does not apply to the streamed method leaves the stream unread and unrecorded", async () => {
    const { call, agentId } = await tenantWith([
      { match: { methods: ["SendMessage"] }, detect: { pii: ["email"] }, action: "block" },
    ]);
    const email = `${marker("ann")}@example.com`;
    const out = await stream(call, agentId, "streaming", streamMessage(email));
    expect(out.text).toContain(`echo: ${email}`);
    expect(out.record.answer_action).toBeNull();
  });
});
