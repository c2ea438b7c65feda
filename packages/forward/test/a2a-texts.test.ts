import { describe, expect, it } from "vitest";
import { a2aAnswerTexts } from "../src/protocols/a2a/texts.ts";

// Which texts of an A2A answer the answer rules read (docs/policy.md "Answer guardrails").
const texts = (v: unknown) =>
  a2aAnswerTexts.texts(typeof v === "string" ? v : JSON.stringify(v))?.map((s) => s.text) ?? null;
const ok = (result: unknown) => ({ jsonrpc: "2.0", id: 1, result });

describe("A2A answer texts", () => {
  it("reads the send, get and streamed methods of both versions; each event of a stream", () => {
    for (const m of [
      "SendMessage",
      "GetTask",
      "SendStreamingMessage",
      "SubscribeToTask",
      "message/send",
      "tasks/get",
      "message/stream",
      "tasks/resubscribe",
    ])
      expect(a2aAnswerTexts.inspects(m)).toBe(true);
    for (const m of ["ListTasks", "CancelTask", "tasks/cancel", null])
      expect(a2aAnswerTexts.inspects(m)).toBe(false);
    expect(a2aAnswerTexts.events).toBe("each");
  });

  it("reads a v1.0 task's status message, history and artifacts, never file or data parts", () => {
    const task = {
      id: "t",
      status: { state: "TASK_STATE_INPUT_REQUIRED", message: { parts: [{ text: "status" }] } },
      artifacts: [
        { artifactId: "a", parts: [{ text: "artifact" }, { raw: "AAAA", mediaType: "image/png" }] },
      ],
      history: [{ messageId: "m", parts: [{ text: "history" }, { data: { text: "not a part text" } }] }],
      metadata: { text: "metadata" },
    };
    expect(texts(ok({ task }))).toEqual(["status", "history", "artifact"]);
    expect(texts(ok(task))).toEqual(["status", "history", "artifact"]);
    expect(texts(ok({ message: { parts: [{ text: "reply" }] } }))).toEqual(["reply"]);
    expect(texts(ok({ statusUpdate: { status: { message: { parts: [{ text: "s" }] } } } }))).toEqual(["s"]);
    expect(texts(ok({ artifactUpdate: { artifact: { parts: [{ text: "a" }] } } }))).toEqual(["a"]);
  });

  it("reads the v0.3 kind:text parts of tasks, messages and events", () => {
    const part = (text: string) => ({ kind: "text", text });
    expect(texts(ok({ kind: "message", parts: [part("m"), { kind: "file", file: { uri: "x" } }] }))).toEqual([
      "m",
    ]);
    expect(
      texts(ok({ kind: "task", id: "t", status: { state: "working", message: { parts: [part("s")] } } })),
    ).toEqual(["s"]);
    expect(texts(ok({ kind: "artifact-update", artifact: { parts: [part("a")] } }))).toEqual(["a"]);
  });

  it("reads an error's message; what it cannot read is null (then blocked)", () => {
    expect(texts({ jsonrpc: "2.0", id: 1, error: { code: -32001, message: "no task x@y.io" } })).toEqual([
      "no task x@y.io",
    ]);
    expect(texts('{"jsonrpc":"2.0","id":1,"result":{"parts":[{"text":"a","text":"b"}]}}')).toBeNull();
    expect(texts("not json")).toBeNull();
    expect(texts({ jsonrpc: "2.0", id: 1, method: "x" })).toBeNull();
  });

  it("gives spans that are the string literals of the texts", () => {
    const json = JSON.stringify(ok({ message: { parts: [{ text: 'a "quoted" é' }] } }));
    const [span] = a2aAnswerTexts.texts(json) ?? [];
    expect(json.slice(span?.start, span?.end)).toBe(JSON.stringify('a "quoted" é'));
  });

  it("blocks with the -32603 JSON-RPC error and the request's id", () => {
    expect(JSON.parse(a2aAnswerTexts.blocked("r-1"))).toEqual({
      jsonrpc: "2.0",
      id: "r-1",
      error: { code: -32603, message: "blocked by gateway policy" },
    });
    expect(JSON.parse(a2aAnswerTexts.blocked(null)).id).toBeNull();
  });
});
