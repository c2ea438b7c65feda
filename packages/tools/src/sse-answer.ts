import { isResponseEvent, type SseBlock, sseBlocks, sseDataLines, sseField } from "@gw/jsonrpc";
import { filterToolsJson, type Keep } from "./filter.ts";

/** The event of a held stream text carrying the response to `requestId`. */
function responseBlock(blocks: readonly SseBlock[], requestId: string | number): SseBlock | null {
  return blocks.find((b) => isResponseEvent(b, requestId)) ?? null;
}

/** The data of the event carrying the response to `requestId`, or null. */
export function sseResponse(text: string, requestId: string | number): string | null {
  return responseBlock(sseBlocks(text), requestId)?.data ?? null;
}

/**
 * Filters the tools of the response event in an SSE answer: that event's data lines are replaced
 * by the filtered JSON (its other lines, `id:` and `event:` included, stay as they were), every
 * other byte is kept. Null when the stream holds no such response or it cannot be filtered.
 */
export function filterToolsSse(text: string, requestId: string | number, keep: Keep): string | null {
  const b = responseBlock(sseBlocks(text), requestId);
  if (b === null || b.data === null) return null;
  const filtered = filterToolsJson(b.data, keep);
  if (filtered === null) return null;
  if (filtered === b.data) return text;
  const kept = b.lines.filter((l) => sseField(l.text)[0] !== "data").map((l) => l.raw);
  const blank = text.slice(b.end - (text[b.end - 2] === "\r" && text[b.end - 1] === "\n" ? 2 : 1), b.end);
  return `${text.slice(0, b.start)}${kept.join("")}${sseDataLines(filtered)}${blank}${text.slice(b.end)}`;
}
