import type { ErrorClass, InvocationUpdate } from "@gw/db";
import type { UpstreamAnswer, UpstreamFailure } from "@gw/upstream";

/** Upstream answer or failure → the invocation's terminal status and error class. */
export function outcomeOf(
  r: UpstreamAnswer | UpstreamFailure,
): Pick<InvocationUpdate, "status" | "errorClass"> {
  if (r.kind === "answer") {
    if (r.status >= 500) return { status: "failed", errorClass: "upstream_5xx" };
    if (r.status >= 400) return { status: "failed", errorClass: "upstream_4xx" };
    return { status: "succeeded", errorClass: null };
  }
  const map: Record<UpstreamFailure["failure"], ErrorClass> = {
    timeout: "timeout",
    ssrf_blocked: "ssrf_blocked",
    // No answer at all from the upstream: the closest class is an upstream-side failure.
    unreachable: "upstream_5xx",
    cancelled: "cancelled",
    internal: "internal",
    too_large: "internal",
  };
  return { status: "failed", errorClass: map[r.failure] };
}

/** The first `max` bytes of a body, for capture. */
export function capped(body: Buffer, max: number): Buffer {
  return body.length > max ? Buffer.from(body.subarray(0, max)) : body;
}
