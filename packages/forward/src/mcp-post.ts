import type { IncomingHttpHeaders } from "node:http";
import { collectJsonRpcFromSse, isEventStream, SseCollectError } from "@gw/jsonrpc";
import { type OpenAnswer, readCapped, type UpstreamFailure } from "@gw/upstream";
import type { GatewayDial } from "./gateway-call.ts";

/** A JSON-RPC message the gateway sends on its own behalf (no `id`: a notification). */
export type McpMessage = { readonly id?: number; readonly method: string; readonly params?: unknown };

/** The answer to one `mcpPost`. */
export type McpPosted = {
  readonly kind: "answer";
  readonly status: number;
  readonly headers: IncomingHttpHeaders;
  /**
   * The answer's text with the credential's secret masked: the body, or the data of the SSE event
   * answering the message (a 2xx event stream). Null when none was read: a notification's answer
   * (never read), a body over `maxBytes`, an event stream that ended without the response.
   */
  readonly text: string | null;
};

/**
 * The one MCP client of the gateway's own calls (a virtual server's member handshake, tool
 * refresh): POSTs one JSON-RPC message over an agent's dial (`dialOnOwnBehalf`: step 9's
 * credential and dial) and reads its answer, JSON or SSE, at most `maxBytes`. Every status is
 * answered (the caller judges it); a failure to reach the agent is the dial's `UpstreamFailure`.
 * `retryable`: whether a transient failure may be tried again (step 9's rule for the method, or
 * the caller's own for a handshake).
 */
export async function mcpPost(
  dial: GatewayDial,
  message: McpMessage,
  headers: Record<string, string>,
  opts: { readonly maxBytes: number; readonly retryable: boolean },
): Promise<McpPosted | UpstreamFailure> {
  const res = await dial.request(
    {
      method: "POST",
      headers: {
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
        ...headers,
      },
      body: Buffer.from(JSON.stringify({ jsonrpc: "2.0", ...message })),
      retryable: opts.retryable,
    },
    (answer) => readAnswer(answer, message.id, opts.maxBytes),
  );
  if (res.kind === "failure") return res;
  const text = res.body === null ? null : dial.redact(res.body);
  return { kind: "answer", status: res.status, headers: res.headers, text };
}

async function readAnswer(
  { status, headers, body }: OpenAnswer,
  id: number | undefined,
  maxBytes: number,
): Promise<string | null> {
  if (id === undefined) {
    await body.dump().catch(() => {});
    return null;
  }
  const type = headers["content-type"];
  if (status >= 200 && status < 300 && isEventStream(Array.isArray(type) ? type[0] : type)) {
    try {
      return Buffer.from(await collectJsonRpcFromSse(body, id, { maxBytes })).toString("utf8");
    } catch (e) {
      // An event stream that ended without the response, or outgrew the bound before it, was
      // read: the agent answered, just not with a response. Its own I/O errors are failures.
      if (e instanceof SseCollectError) {
        body.destroy();
        return null;
      }
      throw e;
    }
  }
  const whole = await readCapped(body, maxBytes);
  return whole ? whole.toString("utf8") : null;
}
