/**
 * Domain errors. Packages throw these; the HTTP layer maps each kind to one status and the
 * spec's `{"error": "..."}` body (see @gw/http). Messages are caller-safe: never put internal
 * state, SQL, secrets or upstream bytes in them.
 */
export type ErrorKind =
  | "invalid" // 400
  | "unauthenticated" // 401, no body
  | "payment_required" // 402
  | "forbidden" // 403
  | "not_found" // 404
  | "method_not_allowed" // 405
  | "conflict" // 409
  | "too_large" // 413
  | "unprocessable" // 422
  | "rate_limited" // 429
  | "bad_gateway" // 502
  | "unavailable" // 503
  | "gateway_timeout"; // 504

export class DomainError extends Error {
  readonly kind: ErrorKind;
  /** Extra response headers (Retry-After, Allow, ...). */
  readonly headers: Readonly<Record<string, string>>;
  /** A full JSON body that replaces `{"error"}` (the x402 challenge). */
  readonly body: unknown;
  /**
   * The status of a refusal a protocol answers in its own shape rather than as an HTTP error
   * (MCP carries JSON-RPC errors in a 200); absent: the kind's status.
   */
  readonly status: number | undefined;

  constructor(
    kind: ErrorKind,
    message: string,
    opts: { headers?: Record<string, string>; body?: unknown; status?: number } = {},
  ) {
    super(message);
    this.name = "DomainError";
    this.kind = kind;
    this.headers = opts.headers ?? {};
    this.body = opts.body;
    this.status = opts.status;
  }
}

export const invalid = (message: string) => new DomainError("invalid", message);
export const notFound = (what: string) => new DomainError("not_found", `${what} not found`);
export const conflict = (message: string) => new DomainError("conflict", message);
export const unprocessable = (message: string) => new DomainError("unprocessable", message);
export const tooLarge = (message: string) => new DomainError("too_large", message);
export const unavailable = (message: string) => new DomainError("unavailable", message);

/**
 * Error codes that mean "the store cannot be reached right now" rather than "this statement is
 * wrong": socket errors, the postgres-js connection states, Postgres class 08 (connection
 * exception), shutdown / starting up (57P0x), too many connections, and our own deadline.
 */
const STORE_DOWN_CODES = new Set([
  "ECONNREFUSED",
  "ENOENT", // a Unix socket that is not there (the server is stopped)
  "ECONNRESET",
  "ETIMEDOUT",
  "EPIPE",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "ENOTFOUND",
  "EAI_AGAIN",
  "CONNECT_TIMEOUT",
  "CONNECTION_CLOSED",
  "CONNECTION_ENDED",
  "CONNECTION_DESTROYED",
  "57P01",
  "57P02",
  "57P03",
  "53300",
  "GW_STORE_DEADLINE",
]);

/** How deep `isStoreUnavailable` follows `cause` / `errors` (a cycle cannot hold it). */
const MAX_CAUSE_DEPTH = 8;

/**
 * Whether `e` says the store is unreachable (mapped to 503 `store unavailable` once, in @gw/http).
 * The driver's error is often wrapped: drizzle's query builder throws a DrizzleQueryError ("Failed
 * query") whose `cause` is the postgres-js error, and a refused dual-stack connect is an
 * AggregateError of one error per address. So the `cause` chain and `errors` are read too;
 * reading only the top-level code would answer a Postgres outage with 500 instead of 503.
 */
export function isStoreUnavailable(e: unknown, depth = 0): boolean {
  if (typeof e !== "object" || e === null || depth > MAX_CAUSE_DEPTH) return false;
  const { code, cause, errors } = e as { code?: unknown; cause?: unknown; errors?: unknown };
  if (typeof code === "string" && (STORE_DOWN_CODES.has(code) || code.startsWith("08"))) return true;
  if (cause !== undefined && isStoreUnavailable(cause, depth + 1)) return true;
  return Array.isArray(errors) && errors.some((x) => isStoreUnavailable(x, depth + 1));
}

/** A store call that did not finish within its deadline (see `isStoreUnavailable`). */
export class StoreDeadline extends Error {
  override name = "StoreDeadline";
  readonly code = "GW_STORE_DEADLINE";
  constructor() {
    super("store did not answer in time");
  }
}

/** How long a read on the proxy's hot path waits for the store before the caller gets 503. */
export const STORE_READ_DEADLINE_MS = 1_500;

/**
 * `read`, or `StoreDeadline` (503 store unavailable) when it has not settled within `ms`: a read
 * on the hot path never holds a caller longer than that while the store is down. The read itself
 * goes on; its late result is dropped.
 */
export async function withinDeadline<T>(read: Promise<T>, ms = STORE_READ_DEADLINE_MS): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new StoreDeadline()), ms);
  });
  read.catch(() => {}); // a late failure is nobody's to handle
  try {
    return await Promise.race([read, deadline]);
  } finally {
    clearTimeout(timer);
  }
}
