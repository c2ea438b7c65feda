import type { ErrorClass, InvocationStatus } from "@gw/db";

/**
 * Why a call ended without a usable upstream answer. The one table from failure to `error_class`
 * that both proxy modes and the worker use.
 */
export type Failure =
  /** A time-out: connect, first byte, idle or the whole-call deadline. */
  | "timeout"
  /** The dial-time SSRF guard refused the address. */
  | "ssrf_blocked"
  /** No answer at all (refused, reset, DNS, TLS), or the answer broke off mid-body. */
  | "unreachable"
  /** The caller went away. */
  | "cancelled"
  /** The agent's credential could not be opened or may not be sent to this host. */
  | "credential"
  /** An MCP server answered 2xx with an event stream that ended without the JSON-RPC response. */
  | "no_response"
  /** An answer over the transactional body cap cannot be stored. */
  | "too_large"
  /** Our own fault, or a call that must not be repeated after its worker died. */
  | "internal";

export const ERROR_CLASS: Readonly<Record<Failure, ErrorClass>> = Object.freeze({
  timeout: "timeout",
  ssrf_blocked: "ssrf_blocked",
  // No answer, or a broken one: the closest class is an upstream-side failure.
  unreachable: "upstream_5xx",
  cancelled: "cancelled",
  credential: "credential_error",
  // The upstream broke the protocol: also the upstream's failure.
  no_response: "upstream_5xx",
  too_large: "internal",
  internal: "internal",
});

/** An upstream answer's status → the invocation's terminal status and error class. */
export function outcomeOfStatus(status: number): { status: InvocationStatus; errorClass: ErrorClass | null } {
  if (status >= 500) return { status: "failed", errorClass: "upstream_5xx" };
  if (status >= 400) return { status: "failed", errorClass: "upstream_4xx" };
  return { status: "succeeded", errorClass: null };
}
