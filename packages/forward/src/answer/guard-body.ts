import type { IncomingHttpHeaders } from "node:http";
import { brotliDecompressSync, gunzipSync, inflateSync } from "node:zlib";
import {
  isEventStream,
  isResponseEvent,
  type JsonRpcId,
  type SseBlock,
  SseParser,
  sseBlocks,
  sseDataLines,
  sseEvent,
  sseField,
} from "@gw/jsonrpc";
import type { Answer, TextSpan } from "../protocols/protocol.ts";

/** Where the response message sits in a held answer: the whole JSON body, or one SSE event. */
export type Located = { readonly json: string; readonly sse: { text: string; block: SseBlock } | null };

const utf8 = new TextDecoder("utf-8", { fatal: true });

/**
 * A held body as text, undoing a Content-Encoding (the caller's Accept-Encoding is forwarded),
 * bounded at `max` decoded bytes. Null when it cannot be read (unknown encoding, corrupt, not
 * UTF-8): a guarded answer that cannot be read is blocked.
 */
export function decodedBody(body: Buffer, headers: IncomingHttpHeaders, max: number): string | null {
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

/** The response to `id` in a held answer: the JSON body, or the data of its SSE event; null when none. */
export function locateResponse(
  text: string,
  headers: IncomingHttpHeaders,
  id: JsonRpcId | null,
): Located | null {
  if (!isEventStream(single(headers["content-type"]))) return { json: text, sse: null };
  if (id === null) return null;
  const block = sseBlocks(text).find((b) => isResponseEvent(b, id));
  return block?.data == null ? null : { json: block.data, sse: { text, block } };
}

/**
 * The answer with its response message replaced by `json`: in an SSE answer only that event's
 * data lines change (its other lines and every other event stay as they were); an SSE answer whose
 * response could not be found becomes one event; a JSON answer becomes `json`. The body is sent
 * decoded, its length counted anew by the relay.
 */
export function rewriteResponse(answer: Answer, located: Located | null, json: string): Answer {
  const { "content-length": _l, "content-encoding": _e, ...headers } = answer.headers;
  const sse = isEventStream(single(answer.headers["content-type"]));
  let body: string;
  if (located?.sse) {
    body = rewriteEvent(located.sse.text, located.sse.block, json);
  } else if (sse) {
    body = sseEvent({ event: "message", data: json });
  } else {
    body = json;
    headers["content-type"] = "application/json";
  }
  return { status: answer.status, headers, body: Buffer.from(body) };
}

/**
 * `text` with the event `b` carrying `json` as its data: only its data lines change (its other
 * lines, its blank line and every other event stay as they were).
 */
export function rewriteEvent(text: string, b: SseBlock, json: string): string {
  const kept = b.lines.filter((l) => sseField(l.text)[0] !== "data").map((l) => l.raw);
  const blank = text.slice(b.end - (text[b.end - 2] === "\r" && text[b.end - 1] === "\n" ? 2 : 1), b.end);
  return `${text.slice(0, b.start)}${kept.join("")}${sseDataLines(json)}${blank}${text.slice(b.end)}`;
}

/** `json` with the texts at `spans` replaced by `next` (same order) where they changed, front to back. */
export function rewriteTexts(json: string, spans: readonly TextSpan[], next: readonly string[]): string {
  // Rewritten front to back, whatever order the protocol listed the texts in.
  const changed = spans
    .map((s, i) => ({ s, next: next[i] as string }))
    .filter((c) => c.next !== c.s.text)
    .sort((a, b) => a.s.start - b.s.start);
  let out = "";
  let at = 0;
  for (const { s, next: text } of changed) {
    out += `${json.slice(at, s.start)}${JSON.stringify(text)}`;
    at = s.end;
  }
  return out + json.slice(at);
}

/**
 * The `endsAt` of a held SSE answer: true once the event carrying the response to `id` arrived
 * (the stream is then not read further; an MCP server closes it there anyway).
 */
export function responseEndsAt(id: JsonRpcId): (chunk: Buffer) => boolean {
  const parser = new SseParser();
  return (chunk) => {
    try {
      return parser.push(chunk).some((e) => isResponseEvent(e, id));
    } catch {
      return false;
    }
  };
}

function single(v: string | string[] | undefined): string | null {
  return typeof v === "string" ? v : null;
}
