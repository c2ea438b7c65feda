import { type HeldResponse, rewriteEvent } from "@gw/forward";
import { filterToolsJson, type Keep } from "./filter.ts";

/**
 * Filters the tools of the response event in a held SSE answer (`readHeld`: `sse` is the decoded
 * stream and that event, `json` its data): that event's data lines are replaced by the filtered
 * JSON (its other lines, `id:` and `event:` included, stay as they were), every other byte is
 * kept. Null when the response cannot be filtered.
 */
export function filterToolsSse(
  sse: NonNullable<HeldResponse["sse"]>,
  json: string,
  keep: Keep,
): string | null {
  const filtered = filterToolsJson(json, keep);
  if (filtered === null) return null;
  if (filtered === json) return sse.text;
  return rewriteEvent(sse.text, sse.block, filtered);
}
