import type { JsonRpcId } from "./parse.ts";
import { SseParser } from "./sse.ts";

export type McpSseFailure = "no_response" | "too_large";

/**
 * The upstream's event stream did not yield the JSON-RPC response the transactional path waits
 * for. The message is caller-safe; `reason` tells the worker which it was.
 */
export class McpSseError extends Error {
  override name = "McpSseError";
  readonly code = "GW_MCP_SSE";
  readonly reason: McpSseFailure;
  constructor(reason: McpSseFailure) {
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
 * Reads an MCP server's `text/event-stream` answer to one request and returns the bytes of the
 * JSON-RPC response whose id equals `requestId` (same type and value). Notifications and
 * server-to-client requests the server sends first (progress, logging, sampling) are skipped.
 * Returns as soon as the response arrives; leaving the loop early closes a Node stream or Web
 * stream through its iterator, so the upstream connection is released.
 *
 * `maxBytes` bounds the bytes read from the stream in total, skipped events included, so memory
 * stays bounded whatever the server sends. Throws McpSseError when the cap is passed or the
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
    if (read > opts.maxBytes) throw new McpSseError("too_large");
    for (const event of parser.push(chunk)) {
      if (isResponseTo(event.event, event.data, requestId)) return encoder.encode(event.data);
    }
  }
  for (const event of parser.end()) {
    if (isResponseTo(event.event, event.data, requestId)) return encoder.encode(event.data);
  }
  throw new McpSseError("no_response");
}

function isResponseTo(type: string, data: string, requestId: JsonRpcId): boolean {
  if (type !== "message") return false;
  let msg: unknown;
  try {
    msg = JSON.parse(data);
  } catch {
    return false; // not a JSON-RPC message (a priming or keep-alive event): skip it
  }
  if (typeof msg !== "object" || msg === null || Array.isArray(msg)) return false;
  const m = msg as Record<string, unknown>;
  return m.jsonrpc === "2.0" && !("method" in m) && ("result" in m || "error" in m) && m.id === requestId;
}

/** True for a `text/event-stream` Content-Type, parameters and case aside. */
export function isEventStream(contentType: string | null | undefined): boolean {
  return /^\s*text\/event-stream\s*(;|$)/i.test(contentType ?? "");
}
