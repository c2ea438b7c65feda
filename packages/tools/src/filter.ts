import { elementSpans, isRecord, memberSpans } from "@gw/jsonrpc";

/** Decides one listed tool: its parsed object (null when it is not an object with a string name). */
export type Keep = (tool: Record<string, unknown> | null) => boolean;

/**
 * Filters the `tools` array of a JSON-RPC response to tools/list, keeping their order and every
 * other byte of the text as it was (id, cursor, other fields, whitespace). A response that is an
 * error is returned unchanged (there is no list in it). Null when the text is not a JSON-RPC
 * response with a result holding a `tools` array (the caller fails closed then).
 */
export function filterToolsJson(text: string, keep: Keep): string | null {
  let msg: unknown;
  try {
    msg = JSON.parse(text);
  } catch {
    return null;
  }
  if (!isRecord(msg) || msg.jsonrpc !== "2.0") return null;
  if (!("result" in msg) && isRecord(msg.error)) return text;
  if (!isRecord(msg.result) || !Array.isArray(msg.result.tools)) return null;
  const top = memberSpans(text, 0);
  const resultSpan = top?.get("result");
  if (!resultSpan) return null;
  const toolsSpan = memberSpans(text, resultSpan.start)?.get("tools");
  if (!toolsSpan) return null;
  const tools = msg.result.tools as unknown[];
  const spans = elementSpans(text, toolsSpan.start);
  if (spans.length !== tools.length) return null;
  const kept: string[] = [];
  let all = true;
  for (let i = 0; i < tools.length; i++) {
    const tool = tools[i];
    const named = isRecord(tool) && typeof tool.name === "string" ? tool : null;
    const span = spans[i];
    if (span && keep(named)) kept.push(text.slice(span.start, span.end));
    else all = false;
  }
  if (all) return text;
  return `${text.slice(0, toolsSpan.start)}[${kept.join(",")}]${text.slice(toolsSpan.end)}`;
}

/** The JSON-RPC error a caller gets when its tool list could not be filtered (fail closed). */
export function unfilterableAnswer(id: string | number | null): string {
  return JSON.stringify({
    jsonrpc: "2.0",
    id,
    error: { code: -32603, message: "tool list could not be filtered" },
  });
}
