import { elementSpans, type JsonRpcId, type Span } from "@gw/jsonrpc";
import type { AnswerTexts, TextSpan } from "../protocol.ts";
import { responseTexts, spansOf, textAt as text } from "../response-texts.ts";

/**
 * The A2A methods whose answers answer rules inspect (docs/policy.md "Answer guardrails"), v1.0
 * names and their v0.3 spellings: the JSON answers of `SendMessage` and `GetTask`, and the SSE
 * answers of the streamed methods, event by event (docs/a2a.md).
 */
export const A2A_INSPECTED_METHODS: ReadonlySet<string> = new Set([
  "SendMessage",
  "GetTask",
  "SendStreamingMessage",
  "SubscribeToTask",
  "message/send",
  "tasks/get",
  "message/stream",
  "tasks/resubscribe",
]);

/**
 * The texts of an A2A JSON-RPC response (`responseTexts`: the error's `message` and these), in
 * every result shape of v1.0 (`task`, `message`, `statusUpdate`, `artifactUpdate` wrappers; a bare
 * Task) and v0.3 (`kind`): the `text` of each part of a message (the result's, a task's `history`,
 * a status's `message`) and of each artifact. File and data parts, ids and metadata are not read.
 */
function textsOf(json: string): TextSpan[] | null {
  return responseTexts(json, (r, out) => {
    // The v1.0 wrappers (one of them); else the result is itself a Task, Message or event.
    const wrapped = ["task", "message", "statusUpdate", "artifactUpdate"]
      .map((k) => r.get(k))
      .filter((s): s is Span => s !== undefined && json[s.start] === "{");
    if (wrapped.length > 0) for (const s of wrapped) object(json, spansOf(json, s.start), out);
    else object(json, r, out);
  });
}

/** A Task, Message, status update or artifact update: whichever of their text-bearing members it has. */
function object(json: string, m: Map<string, Span>, out: TextSpan[]): void {
  parts(json, m.get("parts"), out);
  status(json, m.get("status"), out);
  each(json, m.get("history"), (s) => parts(json, spansOf(json, s.start).get("parts"), out));
  each(json, m.get("artifacts"), (s) => parts(json, spansOf(json, s.start).get("parts"), out));
  const artifact = m.get("artifact");
  if (artifact && json[artifact.start] === "{") parts(json, spansOf(json, artifact.start).get("parts"), out);
}

function status(json: string, span: Span | undefined, out: TextSpan[]): void {
  if (!span || json[span.start] !== "{") return;
  const message = spansOf(json, span.start).get("message");
  if (message && json[message.start] === "{") parts(json, spansOf(json, message.start).get("parts"), out);
}

/** Each part's `text` (v1.0 `{text}`, v0.3 `{kind: "text", text}`). */
function parts(json: string, span: Span | undefined, out: TextSpan[]): void {
  each(json, span, (s) => text(json, spansOf(json, s.start).get("text"), out));
}

/** Calls `f` for each object element of the array at `span` (anything else is not read). */
function each(json: string, span: Span | undefined, f: (s: Span) => void): void {
  if (!span || json[span.start] !== "[") return;
  for (const el of elementSpans(json, span.start)) if (json[el.start] === "{") f(el);
}

/** The JSON-RPC error that replaces a blocked A2A answer, with the request's id. */
function blocked(id: JsonRpcId | null): string {
  return JSON.stringify({
    jsonrpc: "2.0",
    id,
    error: { code: -32603, message: "blocked by gateway policy" },
  });
}

/**
 * How answer guardrails read A2A answers: the JSON answers of the inspected methods, and each
 * event of their SSE answers (every event of an A2A stream is a response to the request).
 */
export const a2aAnswerTexts: AnswerTexts = {
  inspects: (method) => method !== null && A2A_INSPECTED_METHODS.has(method),
  texts: textsOf,
  blocked,
  events: "each",
};
