import { filterToolsJson, type Keep } from "./filter.ts";

type Block = { start: number; end: number; lines: Array<{ text: string; raw: string }> };

/**
 * The events of a held `text/event-stream` answer with their exact extent in the text, so one
 * event can be rewritten and every other byte kept. A trailing event that no blank line closed is
 * not an event (clients discard it) and is left as it is.
 */
function blocks(text: string): Block[] {
  const out: Block[] = [];
  const re = /([^\r\n]*)(\r\n|\r|\n)/g;
  let current: Block | null = null;
  for (let m = re.exec(text); m !== null; m = re.exec(text)) {
    const line = m[1] as string;
    current ??= { start: m.index, end: m.index, lines: [] };
    current.end = m.index + m[0].length;
    if (line === "") {
      out.push(current);
      current = null;
    } else {
      current.lines.push({ text: line, raw: m[0] });
    }
  }
  return out;
}

function fieldOf(line: string): [string, string] {
  const colon = line.indexOf(":");
  if (colon === -1) return [line, ""];
  let value = line.slice(colon + 1);
  if (value.startsWith(" ")) value = value.slice(1);
  return [line.slice(0, colon), value];
}

/** The JSON-RPC response to `requestId` in an event: its data, when the event is one. */
function responseData(block: Block, requestId: string | number): string | null {
  let event = "message";
  const data: string[] = [];
  for (const { text } of block.lines) {
    if (text.startsWith(":")) continue;
    const [field, value] = fieldOf(text);
    if (field === "event") event = value || "message";
    else if (field === "data") data.push(value);
  }
  if (event !== "message" || data.length === 0) return null;
  const joined = data.join("\n");
  try {
    const msg = JSON.parse(joined) as Record<string, unknown>;
    const isResponse =
      typeof msg === "object" && msg !== null && !("method" in msg) && ("result" in msg || "error" in msg);
    return isResponse && msg.id === requestId ? joined : null;
  } catch {
    return null;
  }
}

/** The data of the event carrying the response to `requestId`, or null. */
export function sseResponse(text: string, requestId: string | number): string | null {
  for (const b of blocks(text)) {
    const data = responseData(b, requestId);
    if (data !== null) return data;
  }
  return null;
}

/**
 * Filters the tools of the response event in an SSE answer: that event's data lines are replaced
 * by the filtered JSON (its other lines, `id:` and `event:` included, stay as they were), every
 * other byte is kept. Null when the stream holds no such response or it cannot be filtered.
 */
export function filterToolsSse(text: string, requestId: string | number, keep: Keep): string | null {
  for (const b of blocks(text)) {
    const data = responseData(b, requestId);
    if (data === null) continue;
    const filtered = filterToolsJson(data, keep);
    if (filtered === null) return null;
    if (filtered === data) return text;
    const kept = b.lines.filter((l) => fieldOf(l.text)[0] !== "data").map((l) => l.raw);
    const dataLines = filtered.split(/\r\n|\r|\n/).map((l) => `data: ${l}\n`);
    const blank = text.slice(b.end - (text[b.end - 2] === "\r" && text[b.end - 1] === "\n" ? 2 : 1), b.end);
    return `${text.slice(0, b.start)}${kept.join("")}${dataLines.join("")}${blank}${text.slice(b.end)}`;
  }
  return null;
}
