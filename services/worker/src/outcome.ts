import type { ErrorClass, InvocationUpdate } from "@gw/db";
import type { UpstreamAnswerOf, UpstreamFailure } from "@gw/upstream";
import type { ReadBody } from "./answer.ts";

/** Upstream answer or failure → the invocation's terminal status and error class. */
export function outcomeOf(
  r: UpstreamAnswerOf<ReadBody> | UpstreamFailure,
): Pick<InvocationUpdate, "status" | "errorClass"> {
  if (r.kind === "answer") {
    if (!r.body.ok) return { status: "failed", errorClass: FAILURES[r.body.failure] };
    if (r.status >= 500) return { status: "failed", errorClass: "upstream_5xx" };
    if (r.status >= 400) return { status: "failed", errorClass: "upstream_4xx" };
    return { status: "succeeded", errorClass: null };
  }
  return { status: "failed", errorClass: FAILURES[r.failure] };
}

const FAILURES: Record<UpstreamFailure["failure"] | "no_response", ErrorClass> = {
  timeout: "timeout",
  ssrf_blocked: "ssrf_blocked",
  // No answer at all from the upstream: the closest class is an upstream-side failure.
  unreachable: "upstream_5xx",
  // An MCP server answered 2xx with an event stream that ended without the JSON-RPC response:
  // the upstream broke the protocol, so this too is the upstream's failure.
  no_response: "upstream_5xx",
  cancelled: "cancelled",
  internal: "internal",
  // An answer over the transactional body cap cannot be stored (whether JSON or event stream).
  too_large: "internal",
};

/** The first `max` bytes of a body, for capture. */
export function capped(body: Buffer, max: number): Buffer {
  return body.length > max ? Buffer.from(body.subarray(0, max)) : body;
}
