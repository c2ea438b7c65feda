import { DomainError, type ErrorKind, isStoreUnavailable } from "@gw/core";
import { safeError } from "@gw/telemetry";
import type { Context } from "hono";
import { HTTPException } from "hono/http-exception";
import * as v from "valibot";

/** The body of every 4xx that has one (docs/interface.md, Errors and status codes): a coarse, caller-safe message. */
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

/** An error as the caller gets it: status, headers and JSON body (null: no body). */
export type ErrorAnswer = { status: number; headers: Record<string, string>; body: unknown };

type Log = { warn: (o: object, msg: string) => void; error: (o: object, msg: string) => void };

/**
 * The one place errors become answers. Domain errors map to their status and `{"error"}` (or
 * their own body, for the x402 challenge); 401 has no body; anything unexpected is logged with the
 * request id and answered 500 with no body, so no internal state can leak.
 */
export function errorAnswer(err: unknown, log: Log | undefined): ErrorAnswer {
  if (err instanceof DomainError) {
    const status = err.status ?? STATUS[err.kind];
    const headers = { ...err.headers };
    if (status === 401) return { status, headers, body: null };
    return { status, headers, body: err.body ?? ({ error: err.message } satisfies ErrorJson) };
  }
  if (err instanceof HTTPException && err.status < 500) {
    if (err.status === 401) return { status: 401, headers: {}, body: null };
    return {
      status: err.status,
      headers: {},
      body: { error: err.message || "bad request" } satisfies ErrorJson,
    };
  }
  // Postgres unreachable: a bounded, caller-actionable 503 (docs/reliability.md, Bounded waits), not a 500.
  if (isStoreUnavailable(err)) {
    log?.warn({ err: safeError(err) }, "store unavailable");
    return { status: 503, headers: {}, body: { error: "store unavailable" } };
  }
  // Only the safe subset: a driver error carries the SQL and its parameters (for a credential
  // insert, the ciphertext and the wrapped key), and its message may quote an input value.
  log?.error({ err: safeError(err) }, "unhandled error");
  return { status: 500, headers: {}, body: null };
}

/** `errorAnswer` as a fetch Response (the Hono apps' `onError`). */
// biome-ignore lint/suspicious/noExplicitAny: any Hono env may use the mapper.
export function errorResponse(c: Context<any>, err: unknown): Response {
  const { status, headers, body } = errorAnswer(err, c.get("log"));
  return body === null ? new Response(null, { status, headers }) : Response.json(body, { status, headers });
}
