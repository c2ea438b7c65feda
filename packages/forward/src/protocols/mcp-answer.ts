import { elementSpans, type JsonRpcId, type Span } from "@gw/jsonrpc";
import type { AnswerTexts, TextSpan } from "./protocol.ts";
import { responseTexts, spansOf, textAt as text, Unreadable } from "./response-texts.ts";

/** The MCP methods whose results answer rules inspect (docs/policy.md "Answer guardrails"). */
const INSPECTED = new Set(["tools/call", "resources/read", "prompts/get"]);
/** Nesting followed into `structuredContent`; deeper → the answer cannot be read (blocked). */
const MAX_DEPTH = 64;

/**
 * The texts of an MCP response (`responseTexts`: the error's `message` and these): each text
 * content block of `content` (and of `messages[].content` for prompts/get), the text of an
 * embedded resource, each text of `contents` (resources/read), and every string value of
 * `structuredContent`. Binary parts (images, audio, blobs) and keys are not read; nesting past
 * MAX_DEPTH cannot be read.
 */
function textsOf(json: string): TextSpan[] | null {
  return responseTexts(json, (r, out) => {
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
  });
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
