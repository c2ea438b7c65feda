import type { IncomingHttpHeaders } from "node:http";
import { brotliDecompressSync, gunzipSync, inflateSync } from "node:zlib";
import { isEventStream } from "@gw/jsonrpc";
import { TOOL_LIST_MAX_BYTES } from "./answer.ts";
import { textOf } from "./filter.ts";
import { sseResponse } from "./sse-answer.ts";

/**
 * The body as text, undoing a Content-Encoding the upstream applied (the caller's Accept-Encoding
 * is forwarded), bounded at TOOL_LIST_MAX_BYTES decoded. Null when it cannot be read.
 */
export function decodedText(body: Buffer, headers: IncomingHttpHeaders): string | null {
  const encoding = String(headers["content-encoding"] ?? "identity")
    .trim()
    .toLowerCase();
  const opts = { maxOutputLength: TOOL_LIST_MAX_BYTES };
  try {
    if (encoding === "identity" || encoding === "") return textOf(body);
    if (encoding === "gzip" || encoding === "x-gzip") return textOf(gunzipSync(body, opts));
    if (encoding === "deflate") return textOf(inflateSync(body, opts));
    if (encoding === "br") return textOf(brotliDecompressSync(body, opts));
  } catch {
    return null;
  }
  return null;
}

/** The JSON-RPC response text of a tools/list answer, JSON or SSE; null when there is none. */
export function responseText(
  body: Buffer,
  headers: IncomingHttpHeaders,
  requestId: string | number,
): string | null {
  const text = decodedText(body, headers);
  if (text === null) return null;
  return isEventStream(single(headers["content-type"])) ? sseResponse(text, requestId) : text;
}

export function single(v: string | string[] | undefined): string | undefined {
  return Array.isArray(v) ? v[0] : v;
}
