import { type JsonRpcId, responseTo } from "./envelope.ts";
import { parseJson } from "./guards.ts";
import { SseParser } from "./sse.ts";

export type SseCollectFailure = "no_response" | "too_large";

/**
 * A peer's event stream did not yield the JSON-RPC response a caller waits for. The message is
 * caller-safe; `reason` says which it was.
 */
export class SseCollectError extends Error {
  override name = "SseCollectError";
  readonly code = "GW_SSE_COLLECT";
  readonly reason: SseCollectFailure;
  constructor(reason: SseCollectFailure) {
    super(
      reason === "too_large"
        ? "upstream event stream exceeded the size limit before the JSON-RPC response"
        : "upstream event stream ended without the JSON-RPC response",
    );
    this.reason = reason;
  }
}

const encoder = new TextEncoder();

/**
 * Reads a `text/event-stream` answer to one JSON-RPC request and returns the bytes of the response
 * whose id equals `requestId` (same type and value). Notifications and requests the peer sends
 * first (progress, logging, a server's own requests) are skipped, as are events of another type
 * and data that is not JSON. Returns as soon as the response arrives; leaving the loop early
 * closes a Node stream or Web stream through its iterator, so the connection is released.
 *
 * `maxBytes` bounds the bytes read from the stream in total, skipped events included, so memory
 * stays bounded whatever the peer sends. Throws SseCollectError when the cap is passed or the
 * stream ends without the response.
 */
export async function collectJsonRpcFromSse(
  stream: AsyncIterable<Uint8Array>,
  requestId: JsonRpcId,
  opts: { maxBytes: number },
): Promise<Uint8Array> {
  const parser = new SseParser();
  let read = 0;
  for await (const chunk of stream) {
    read += chunk.byteLength;
    if (read > opts.maxBytes) throw new SseCollectError("too_large");
    for (const event of parser.push(chunk)) {
      if (isResponseTo(event.event, event.data, requestId)) return encoder.encode(event.data);
    }
  }
  for (const event of parser.end()) {
    if (isResponseTo(event.event, event.data, requestId)) return encoder.encode(event.data);
  }
  throw new SseCollectError("no_response");
}

function isResponseTo(type: string, data: string, requestId: JsonRpcId): boolean {
  // A priming or keep-alive event (empty or not JSON) is skipped like any other.
  return type === "message" && responseTo(parseJson(data), requestId) !== null;
}

/** Whether an event carries the JSON-RPC response to `requestId` (a `message` event whose data is it). */
export function isResponseEvent(e: { event: string; data: string | null }, requestId: JsonRpcId): boolean {
  return e.data !== null && isResponseTo(e.event, e.data, requestId);
}
