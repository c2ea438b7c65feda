import type { IncomingHttpHeaders } from "node:http";
import { type GatewayDial, mcpPost } from "@gw/forward";
import { isRetryableMcpMethod } from "@gw/mcp";
import type { UpstreamFailure } from "@gw/upstream";
import { TOOL_LIST_MAX_BYTES } from "./answer.ts";

/** Why a refresh could not read the server's list. */
export type RefreshFailure = "unreachable" | "timeout" | "ssrf_blocked" | "bad_answer";

export class RefreshError extends Error {
  override name = "RefreshError";
  constructor(readonly failure: RefreshFailure) {
    super(failure);
  }
}

/**
 * POSTs one JSON-RPC message over the agent's dial (`mcpPost`, step 9's credential and dial) and
 * returns the response text (JSON, or the response event of an SSE answer, each at most
 * TOOL_LIST_MAX_BYTES) with the credential's secret masked, and the answer's headers; null text
 * for a notification's 202. A non-2xx answer (a redirect included: none is followed) or an
 * unreadable body is `bad_answer`. Retried on transient failures as step 9 retries the method.
 */
export async function mcpRequest(
  dial: GatewayDial,
  message: { id?: number; method: string; params?: Record<string, unknown> },
  headers: Record<string, string>,
): Promise<{ text: string | null; headers: IncomingHttpHeaders }> {
  const res = await mcpPost(dial, message, headers, {
    maxBytes: TOOL_LIST_MAX_BYTES,
    retryable: isRetryableMcpMethod(message.method),
  });
  if (res.kind === "failure") throw failureOf(res);
  if (res.status < 200 || res.status > 299) throw new RefreshError("bad_answer");
  if (message.id !== undefined && res.text === null) throw new RefreshError("bad_answer");
  return { text: res.text, headers: res.headers };
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

function failureOf(f: UpstreamFailure): RefreshError {
  if (f.failure === "timeout" || f.failure === "cancelled") return new RefreshError("timeout");
  if (f.failure === "ssrf_blocked") return new RefreshError("ssrf_blocked");
  return new RefreshError(f.failure === "unreachable" ? "unreachable" : "bad_answer");
}
