import { DomainError, type ErrorKind, isStoreUnavailable } from "@gw/core";
import { safeError } from "@gw/telemetry";
import type { Context } from "hono";
import { HTTPException } from "hono/http-exception";
import * as v from "valibot";

/** The body of every 4xx that has one (spec §2.8): a coarse, caller-safe message. */
export const ErrorBody = v.object({ error: v.string() });
type ErrorJson = v.InferOutput<typeof ErrorBody>;

const STATUS: Record<ErrorKind, number> = {
  invalid: 400,
  unauthenticated: 401,
  payment_required: 402,
  forbidden: 403,
  not_found: 404,
  method_not_allowed: 405,
  conflict: 409,
  too_large: 413,
  unprocessable: 422,
  rate_limited: 429,
  bad_gateway: 502,
  unavailable: 503,
  gateway_timeout: 504,
};

export function statusOf(kind: ErrorKind): number {
  return STATUS[kind];
}

/**
 * The one place errors become responses. Domain errors map to their status and `{"error"}` (or
 * their own body, for the x402 challenge); 401 has no body; anything unexpected is logged with the
 * request id and answered 500 with no body, so no internal state can leak.
 */
// biome-ignore lint/suspicious/noExplicitAny: any Hono env may use the mapper.
export function errorResponse(c: Context<any>, err: unknown): Response {
  if (err instanceof DomainError) {
    const status = STATUS[err.kind];
    const headers = { ...err.headers };
    if (status === 401) return new Response(null, { status, headers });
    return Response.json(err.body ?? ({ error: err.message } satisfies ErrorJson), { status, headers });
  }
  if (err instanceof HTTPException && err.status < 500) {
    if (err.status === 401) return new Response(null, { status: 401 });
    return Response.json({ error: err.message || "bad request" } satisfies ErrorJson, { status: err.status });
  }
  // Postgres unreachable: a bounded, caller-actionable 503 (DESIGN.md §3 Proxy, faults), not a 500.
  if (isStoreUnavailable(err)) {
    c.get("log")?.warn({ err: safeError(err) }, "store unavailable");
    return Response.json({ error: "store unavailable" }, { status: 503 });
  }
  // Only the safe subset: a driver error carries the SQL and its parameters (for a credential
  // insert, the ciphertext and the wrapped key), and its message may quote an input value.
  const log = c.get("log");
  log?.error({ err: safeError(err) }, "unhandled error");
  return new Response(null, { status: 500 });
}
