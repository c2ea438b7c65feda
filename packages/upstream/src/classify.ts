import { SsrfBlockedError } from "./dispatcher.ts";

export type FailureClass = "timeout" | "ssrf_blocked" | "unreachable" | "cancelled" | "internal";

const TIMEOUT_CODES = new Set([
  "UND_ERR_CONNECT_TIMEOUT",
  "UND_ERR_HEADERS_TIMEOUT",
  "UND_ERR_BODY_TIMEOUT",
  "ETIMEDOUT",
  "ESOCKETTIMEDOUT",
]);
const UNREACHABLE_CODES = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "ENOTFOUND",
  "EAI_AGAIN",
  "EPIPE",
  "UND_ERR_SOCKET",
  "UND_ERR_CLOSED",
  "ERR_TLS_CERT_ALTNAME_INVALID",
  "UNABLE_TO_VERIFY_LEAF_SIGNATURE",
  "SELF_SIGNED_CERT_IN_CHAIN",
  "DEPTH_ZERO_SELF_SIGNED_CERT",
  "CERT_HAS_EXPIRED",
]);

/** What went wrong with an upstream call that produced no answer. */
export function classifyFailure(err: unknown): FailureClass {
  let e: unknown = err;
  let sawCode = false;
  // undici wraps the connect error; look through causes.
  for (let depth = 0; depth < 4 && e; depth++) {
    if (e instanceof SsrfBlockedError || (e as { code?: string }).code === "GW_SSRF_BLOCKED")
      return "ssrf_blocked";
    const code = (e as { code?: string }).code;
    const name = (e as { name?: string }).name;
    if (name === "TimeoutError" || (code && TIMEOUT_CODES.has(code))) return "timeout";
    if (code === "UND_ERR_ABORTED" || name === "AbortError") return "cancelled";
    if (code && UNREACHABLE_CODES.has(code)) return "unreachable";
    if (code) sawCode = true;
    e = (e as { cause?: unknown }).cause;
  }
  // Any other coded error is a network or TLS failure; an uncoded one is our own fault.
  return sawCode ? "unreachable" : "internal";
}

/** Failures where the request cannot have been processed: safe to try again. */
export function isConnectionFailure(err: unknown): boolean {
  const f = classifyFailure(err);
  if (f === "unreachable") return true;
  let e: unknown = err;
  for (let depth = 0; depth < 4 && e; depth++) {
    if ((e as { code?: string }).code === "UND_ERR_CONNECT_TIMEOUT") return true;
    e = (e as { cause?: unknown }).cause;
  }
  return false;
}

/** Statuses worth another attempt: the upstream (or a proxy before it) did not process the call. */
export function isRetryableStatus(status: number): boolean {
  return status === 502 || status === 503 || status === 504;
}

/** Exponential back-off from `baseMs` with full jitter. */
export function backoffMs(attempt: number, baseMs: number): number {
  const cap = baseMs * 2 ** attempt;
  return cap / 2 + Math.random() * (cap / 2);
}
