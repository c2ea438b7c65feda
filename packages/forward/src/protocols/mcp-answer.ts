import { elementSpans, isRecord, type JsonRpcId, memberSpans, type Span } from "@gw/jsonrpc";
import type { AnswerTexts, TextSpan } from "./protocol.ts";

/** The MCP methods whose results answer rules inspect (docs/policy.md "Answer guardrails"). */
const INSPECTED = new Set(["tools/call", "resources/read", "prompts/get"]);
/** Nesting followed into `structuredContent`; deeper → the answer cannot be read (blocked). */
const MAX_DEPTH = 64;

class Unreadable extends Error {}

/**
 * The texts of an MCP response, as spans of their string literals in the JSON text (so a redaction
 * rewrites only them): each text content block of `content` (and of `messages[].content` for
 * prompts/get), the text of an embedded resource, each text of `contents` (resources/read), every
 * string value of `structuredContent`, and an error's `message`. Binary parts (images, audio,
 * blobs) and keys are not read. Null when the text is not one JSON-RPC response that can be read
 * (duplicate keys, nesting past MAX_DEPTH).
 */
function textsOf(json: string): TextSpan[] | null {
  let root: unknown;
  try {
    root = JSON.parse(json);
  } catch {
    return null;
  }
  if (!isRecord(root) || !("result" in root || "error" in root)) return null;
  const out: TextSpan[] = [];
  try {
    const top = spansOf(json, 0);
    const result = top.get("result");
    if (result && json[result.start] === "{") {
      const r = spansOf(json, result.start);
      const content = r.get("content");
      if (content) blocks(json, content, out);
      const structured = r.get("structuredContent");
      if (structured) strings(json, structured, 0, out);
      const contents = r.get("contents");
      if (contents) blocks(json, contents, out);
      const messages = r.get("messages");
      if (messages && json[messages.start] === "[") {
        for (const m of elementSpans(json, messages.start)) {
          const c = json[m.start] === "{" ? spansOf(json, m.start).get("content") : undefined;
          if (c) json[c.start] === "[" ? blocks(json, c, out) : block(json, c, out);
        }
      }
    }
    const error = top.get("error");
    if (error && json[error.start] === "{") text(json, spansOf(json, error.start).get("message"), out);
  } catch (e) {
    if (e instanceof Unreadable) return null;
    throw e;
  }
  return out;
}

function spansOf(json: string, at: number): Map<string, Span> {
  const m = memberSpans(json, at);
  if (m === null) throw new Unreadable();
  return m;
}

function blocks(json: string, span: Span, out: TextSpan[]): void {
  if (json[span.start] !== "[") return;
  for (const el of elementSpans(json, span.start)) block(json, el, out);
}

/** A content block or resource contents: its `text`, or its embedded `resource`'s. */
function block(json: string, span: Span, out: TextSpan[]): void {
  if (json[span.start] !== "{") return;
  const m = spansOf(json, span.start);
  text(json, m.get("text"), out);
  const resource = m.get("resource");
  if (resource && json[resource.start] === "{") text(json, spansOf(json, resource.start).get("text"), out);
}

function text(json: string, span: Span | undefined, out: TextSpan[]): void {
  if (span && json[span.start] === '"') {
    out.push({ ...span, text: JSON.parse(json.slice(span.start, span.end)) as string });
  }
}

function strings(json: string, span: Span, depth: number, out: TextSpan[]): void {
  if (depth > MAX_DEPTH) throw new Unreadable();
  const c = json[span.start];
  if (c === '"') text(json, span, out);
  else if (c === "{") for (const s of spansOf(json, span.start).values()) strings(json, s, depth + 1, out);
  else if (c === "[") for (const s of elementSpans(json, span.start)) strings(json, s, depth + 1, out);
}

/** The tool error result that replaces a blocked MCP answer, with the request's id. */
function blocked(id: JsonRpcId | null): string {
  return JSON.stringify({
    jsonrpc: "2.0",
    id,
    result: { content: [{ type: "text", text: "blocked by gateway policy" }], isError: true },
  });
}

/** How answer guardrails read MCP answers: the response event of an SSE answer, or the JSON body. */
export const mcpAnswerTexts: AnswerTexts = {
  inspects: (method) => method !== null && INSPECTED.has(method),
  texts: textsOf,
  blocked,
  events: "response",
};
