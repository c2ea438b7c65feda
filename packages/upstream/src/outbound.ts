import type { IncomingHttpHeaders } from "node:http";
import { Agent, type Dispatcher } from "undici";
import { readCapped } from "./call.ts";
import { Cancel } from "./cancel.ts";
import { classifyFailure } from "./classify.ts";

/**
 * The gateway's own calls to other services (docs/architecture.md, "Calls to other services"): a
 * tenant's classifier webhook, OAuth token, revocation and discovery endpoints and x402
 * facilitator, and the operator's JWKS. Each is one request and one whole answer read under a cap,
 * all within one deadline; no redirect is followed (undici follows none), so a 3xx is an answer
 * like any other status.
 *
 * Which dispatcher a call goes through is the SSRF decision, and the caller states it:
 * - a URL a tenant wrote goes through the runtime's SSRF-guarded dispatcher
 *   (`createUpstreamDispatcher`: the dial-time guard of every upstream call, and its connect time-out);
 * - a URL the operator configured (GW_JWKS_URL) goes through `operatorDispatcher()`, which may reach
 *   a private network, as an identity provider often is.
 * Both are made once per process; nothing here makes a dispatcher per call.
 */

/** Why a call has no answer. A connect time-out is `unreachable`, like a refused connection. */
export type OutboundFailure = "timeout" | "blocked" | "unreachable";

export type OutboundRequest = {
  /** The runtime's SSRF-guarded dispatcher for a tenant's URL; `operatorDispatcher()` for the operator's. */
  via: Dispatcher;
  url: string | URL;
  method?: Dispatcher.HttpMethod;
  headers?: Record<string, string>;
  body?: string | null;
  /** Deadline of the whole exchange: connect, head and body. */
  timeoutMs: number;
  /** The answer's body is read up to this many bytes; a longer one is `too_large`. */
  maxBytes: number;
  /** Statuses whose body the caller reads; any other is read off and dropped. Every status when absent. */
  reads?: (status: number) => boolean;
};

export type OutboundAnswer =
  | { kind: "answer"; status: number; headers: IncomingHttpHeaders; body: Buffer }
  /** A status the caller does not read: its body was dropped unseen. */
  | { kind: "dropped"; status: number; headers: IncomingHttpHeaders }
  | { kind: "too_large"; status: number; headers: IncomingHttpHeaders }
  /** `error` is what failed (a TimeoutError DOMException at the deadline), for a log's error code only. */
  | { kind: "failed"; failure: OutboundFailure; error: unknown };

/** A dropped answer is read off up to this much, so the connection can serve the next call. */
const DROP_MAX_BYTES = 64 * 1024;

/** An operator's endpoint gets this long to accept the connection (the call's deadline still applies). */
const OPERATOR_CONNECT_TIMEOUT_MS = 10_000;

let operator: Agent | undefined;

/**
 * The process's dispatcher for URLs the operator configured: keep-alive pools, a connect
 * time-out, no SSRF guard. Made on first use; its idle sockets do not hold the process open.
 */
export function operatorDispatcher(): Dispatcher {
  operator ??= new Agent({ connect: { timeout: OPERATOR_CONNECT_TIMEOUT_MS } });
  return operator;
}

/** One request to another service and its whole answer, within `timeoutMs`. Never throws. */
export async function callOut(req: OutboundRequest): Promise<OutboundAnswer> {
  // The deadline as a Cancel emitter and a timer, as upstream calls have it (ADR 0022).
  const deadline = new Cancel();
  const timer = setTimeout(() => deadline.abort(), req.timeoutMs);
  try {
    return await exchange(req, deadline);
  } finally {
    clearTimeout(timer);
  }
}

async function exchange(req: OutboundRequest, deadline: Cancel): Promise<OutboundAnswer> {
  let res: Dispatcher.ResponseData;
  try {
    const url = typeof req.url === "string" ? new URL(req.url) : req.url;
    res = await req.via.request({
      origin: url.origin,
      path: `${url.pathname}${url.search}`,
      method: req.method ?? "GET",
      headers: req.headers ?? {},
      body: req.body ?? null,
      signal: deadline,
    });
  } catch (e) {
    return failed(e, deadline);
  }
  const { statusCode: status, headers } = res;
  if (req.reads && !req.reads(status)) {
    // Bounded and within the deadline; how the drop ends changes nothing for the caller.
    await res.body.dump({ limit: DROP_MAX_BYTES }).catch(() => {});
    return { kind: "dropped", status, headers };
  }
  try {
    const body = await readCapped(res.body, req.maxBytes);
    return body === null ? { kind: "too_large", status, headers } : { kind: "answer", status, headers, body };
  } catch (e) {
    return failed(e, deadline);
  }
}

function failed(e: unknown, deadline: Cancel): OutboundAnswer {
  if (deadline.aborted) {
    return {
      kind: "failed",
      failure: "timeout",
      error: new DOMException("The operation was aborted due to timeout", "TimeoutError"),
    };
  }
  return {
    kind: "failed",
    failure: classifyFailure(e) === "ssrf_blocked" ? "blocked" : "unreachable",
    error: e,
  };
}
