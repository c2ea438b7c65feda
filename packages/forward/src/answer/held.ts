import type { IncomingHttpHeaders } from "node:http";
import { brotliDecompressSync, gunzipSync, inflateSync } from "node:zlib";
import { isEventStream, isResponseEvent, type JsonRpcId, type SseBlock, sseBlocks } from "@gw/jsonrpc";

/**
 * The JSON-RPC response in a held answer: the message's text (the whole JSON body, or the data of
 * its SSE event), and for an SSE answer the decoded stream and that event, which a hook rewriting
 * the response replaces in place (`rewriteEvent`, guard-body.ts).
 */
export type HeldResponse = {
  readonly json: string;
  readonly sse: { readonly text: string; readonly block: SseBlock } | null;
};

const utf8 = new TextDecoder("utf-8", { fatal: true });

/**
 * The one reader of a held answer, for every answer hook that reads one (the guard, the tool
 * catalog's hook): the body decoded and the response to the request found in it, JSON or SSE.
 * Null when it cannot be read (unknown encoding, corrupt, over `maxBytes` decoded, not UTF-8) or
 * holds no response to `id` (an SSE answer; a JSON answer is the response whatever its id): a hook
 * then fails closed.
 */
export function readHeld(
  body: Buffer,
  headers: IncomingHttpHeaders,
  id: JsonRpcId | null,
  maxBytes: number,
): HeldResponse | null {
  const text = decodedBody(body, headers, maxBytes);
  if (text === null) return null;
  if (!isEventStreamAnswer(headers)) return { json: text, sse: null };
  if (id === null) return null;
  const block = sseBlocks(text).find((b) => isResponseEvent(b, id));
  return block?.data == null ? null : { json: block.data, sse: { text, block } };
}

/** Whether an answer's head says its body is an SSE stream. */
export function isEventStreamAnswer(headers: IncomingHttpHeaders): boolean {
  const type = headers["content-type"];
  return isEventStream(typeof type === "string" ? type : null);
}

/**
 * A held body as text, undoing a Content-Encoding (the caller's Accept-Encoding is forwarded),
 * bounded at `max` decoded bytes. Null when it cannot be read (unknown encoding, corrupt, not
 * UTF-8).
 */
function decodedBody(body: Buffer, headers: IncomingHttpHeaders, max: number): string | null {
  const encoding = String(headers["content-encoding"] ?? "identity")
    .trim()
    .toLowerCase();
  const opts = { maxOutputLength: max };
  try {
    if (encoding === "identity" || encoding === "") return utf8.decode(body);
    if (encoding === "gzip" || encoding === "x-gzip") return utf8.decode(gunzipSync(body, opts));
    if (encoding === "deflate") return utf8.decode(inflateSync(body, opts));
    if (encoding === "br") return utf8.decode(brotliDecompressSync(body, opts));
  } catch {
    return null;
  }
  return null;
}
