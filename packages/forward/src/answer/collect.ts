import type { IncomingHttpHeaders } from "node:http";
import { LIMITS } from "@gw/core";
import { collectJsonRpcFromSse, isEventStream, SseCollectError } from "@gw/jsonrpc";
import { type OpenAnswer, readCapped } from "@gw/upstream";
import type { Protocol } from "../protocols/index.ts";

/** What a collected call keeps of an upstream answer: the body to store, or why there is none. */
export type ReadBody =
  | { ok: true; body: Buffer; contentType: string | null }
  | { ok: false; failure: "too_large" | "no_response" };

/**
 * The body reader of a collected (transactional) call, capped at LIMITS.transactMaxBodyBytes. When an MCP
 * request (a protocol that collects up to a request id) is answered 2xx with `text/event-stream`,
 * the stored body is the JSON-RPC response
 * collected from the stream, as application/json: reading stops as soon as it arrives, and
 * notifications sent before it are dropped (docs/mcp.md). Any other answer is read whole.
 */
export function answerReader(call: {
  readonly speaks: Protocol;
  readonly rpcId: string | number | null;
}): (answer: OpenAnswer) => Promise<ReadBody> {
  const requestId = call.speaks.collectUpTo(call.rpcId);
  return async ({ status, headers, body }) => {
    const contentType = single(headers["content-type"]);
    if (requestId !== null && status >= 200 && status < 300 && isEventStream(contentType)) {
      try {
        const json = await collectJsonRpcFromSse(body, requestId, {
          maxBytes: LIMITS.transactMaxBodyBytes,
        });
        return { ok: true, body: Buffer.from(json), contentType: "application/json" };
      } catch (e) {
        // The stream's own I/O errors propagate: the retry policy classifies them.
        if (e instanceof SseCollectError) return { ok: false, failure: e.reason };
        throw e;
      }
    }
    const whole = await readCapped(body, LIMITS.transactMaxBodyBytes);
    return whole ? { ok: true, body: whole, contentType } : { ok: false, failure: "too_large" };
  };
}

/** Response headers the poll returns besides content-type, so an MCP client can go on. */
const KEPT_HEADERS = ["mcp-session-id", "mcp-protocol-version"] as const;

export function keptHeaders(headers: IncomingHttpHeaders): Record<string, string> | null {
  const out: Record<string, string> = {};
  for (const name of KEPT_HEADERS) {
    const value = single(headers[name]);
    if (value !== null) out[name] = value;
  }
  return Object.keys(out).length > 0 ? out : null;
}

function single(v: string | string[] | undefined): string | null {
  return typeof v === "string" ? v : null;
}
