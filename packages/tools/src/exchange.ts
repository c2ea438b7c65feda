import type { IncomingHttpHeaders } from "node:http";
import type { GatewayDial } from "@gw/forward";
import { collectJsonRpcFromSse, isEventStream, SseCollectError } from "@gw/jsonrpc";
import { isRetryableMcpMethod } from "@gw/mcp";
import { type OpenAnswer, readCapped, type UpstreamFailure } from "@gw/upstream";
import { TOOL_LIST_MAX_BYTES } from "./answer.ts";

/** Why a refresh could not read the server's list. */
export type RefreshFailure = "unreachable" | "timeout" | "ssrf_blocked" | "bad_answer";

export class RefreshError extends Error {
  override name = "RefreshError";
  constructor(readonly failure: RefreshFailure) {
    super(failure);
  }
}

/** What the reader made of an answer: the response text (null for a notification's), or nothing usable. */
type Read = { ok: true; text: string | null } | { ok: false };

/**
 * POSTs one JSON-RPC message over the agent's dial (step 9's credential and dial, see
 * `dialOnOwnBehalf`) and returns the response text (JSON, or the response event of an SSE answer,
 * each at most TOOL_LIST_MAX_BYTES) with the credential's secret masked, and the answer's headers;
 * null text for a notification's 202. A non-2xx answer (a redirect included: none is followed) or
 * an unreadable body is `bad_answer`. Retried on transient failures as step 9 retries the method.
 */
export async function mcpPost(
  dial: GatewayDial,
  message: { id?: number; method: string; params?: Record<string, unknown> },
  headers: Record<string, string>,
): Promise<{ text: string | null; headers: IncomingHttpHeaders }> {
  const body = Buffer.from(JSON.stringify({ jsonrpc: "2.0", ...message }));
  const res = await dial.request(
    {
      method: "POST",
      headers: {
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
        ...headers,
      },
      body,
      retryable: isRetryableMcpMethod(message.method),
    },
    (answer) => readAnswer(answer, message.id),
  );
  if (res.kind === "failure") throw failureOf(res);
  if (!res.body.ok) throw new RefreshError("bad_answer");
  return { text: res.body.text === null ? null : dial.redact(res.body.text), headers: res.headers };
}

/** Ends a server session (older revisions); best effort. */
export async function mcpEnd(dial: GatewayDial, headers: Record<string, string>): Promise<void> {
  // The list was read; a server that cannot end its session is no reason to fail the refresh.
  await dial
    .request({ method: "DELETE", headers, body: null, retryable: false }, async (a) => {
      await a.body.dump().catch(() => {});
    })
    .catch(() => {});
}

async function readAnswer({ status, headers, body }: OpenAnswer, id: number | undefined): Promise<Read> {
  if (status < 200 || status > 299 || id === undefined) {
    await body.dump().catch(() => {});
    return status < 200 || status > 299 ? { ok: false } : { ok: true, text: null };
  }
  const type = headers["content-type"];
  if (isEventStream(Array.isArray(type) ? type[0] : type)) {
    try {
      const bytes = await collectJsonRpcFromSse(body, id, { maxBytes: TOOL_LIST_MAX_BYTES });
      return { ok: true, text: Buffer.from(bytes).toString("utf8") };
    } catch (e) {
      // An event stream that ended without the response, or outgrew the bound before it, was read:
      // the server answered, just not a tools/list result. Its own I/O errors are network failures.
      if (e instanceof SseCollectError) {
        body.destroy();
        return { ok: false };
      }
      throw e;
    }
  }
  const whole = await readCapped(body, TOOL_LIST_MAX_BYTES);
  return whole ? { ok: true, text: whole.toString("utf8") } : { ok: false };
}

function failureOf(f: UpstreamFailure): RefreshError {
  if (f.failure === "timeout" || f.failure === "cancelled") return new RefreshError("timeout");
  if (f.failure === "ssrf_blocked") return new RefreshError("ssrf_blocked");
  return new RefreshError(f.failure === "unreachable" ? "unreachable" : "bad_answer");
}
