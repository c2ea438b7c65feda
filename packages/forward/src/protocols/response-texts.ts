import { isRecord, memberSpans, type Span } from "@gw/jsonrpc";
import type { TextSpan } from "./protocol.ts";

/** Thrown where a response cannot be read (duplicate keys, too deep): its texts are then null. */
export class Unreadable extends Error {}

/**
 * The texts of one JSON-RPC response, as spans of their string literals in the JSON text (so a
 * redaction rewrites only them): the error's `message`, and what the protocol reads of the
 * result object (`fromResult`, given its members). The scaffold every protocol's `AnswerTexts`
 * shares (a2a/texts.ts, mcp-answer.ts). Null when the text is not one JSON-RPC response that can
 * be read (not JSON, duplicate keys, `Unreadable` thrown).
 */
export function responseTexts(
  json: string,
  fromResult: (result: Map<string, Span>, out: TextSpan[]) => void,
): TextSpan[] | null {
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
    if (result && json[result.start] === "{") fromResult(spansOf(json, result.start), out);
    const error = top.get("error");
    if (error && json[error.start] === "{") textAt(json, spansOf(json, error.start).get("message"), out);
  } catch (e) {
    if (e instanceof Unreadable) return null;
    throw e;
  }
  return out;
}

/** The members of the object at `at` (`Unreadable` when they cannot be told apart: duplicate keys). */
export function spansOf(json: string, at: number): Map<string, Span> {
  const m = memberSpans(json, at);
  if (m === null) throw new Unreadable();
  return m;
}

/**
 * The string at `span`, if it is one, added to `out` with its decoded text. A string without a
 * backslash is its own text (the answer parsed as JSON, so it holds no quote or control character
 * unescaped): it is sliced, not parsed again.
 */
export function textAt(json: string, span: Span | undefined, out: TextSpan[]): void {
  if (span && json[span.start] === '"') {
    const raw = json.slice(span.start + 1, span.end - 1);
    const text = raw.includes("\\") ? (JSON.parse(json.slice(span.start, span.end)) as string) : raw;
    out.push({ start: span.start, end: span.end, text });
  }
}
