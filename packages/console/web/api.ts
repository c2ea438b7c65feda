// The console's only door to the API. Its call shape is openapi-fetch's on purpose
// (`api.GET("/v1/agents/{id}", { params: { path: { id } } })` → `{ data } | { error }`), so that when
// @gw/client exists this module becomes `createClient<paths>({ baseUrl, headers })` plus the
// 401 hook, and no screen changes. `Routes` below is the hand-written stand-in for `paths`.
// The console's only door to the API: the typed client of @gw/client (openapi-fetch over the
// types generated from the OpenAPI document), so every path, parameter, body and answer a screen
// uses is checked against the document at compile time: a drift breaks `pnpm typecheck`.
import { createGatewayClient, type GatewayClient } from "@gw/client";

export type Api = GatewayClient;

export type ApiOptions = {
  baseUrl?: string;
  token: () => string | null;
  /** Called on every 401: the token expired or was never valid. */
  onUnauthorized?: () => void;
};

/** Messages for the statuses the API answers without a body (docs/api.md: 401 and 500). */
function bodilessError(status: number): string {
  if (status === 401) return "The token was rejected (missing, invalid or expired). Sign in again.";
  if (status >= 500) return `The server failed to answer (HTTP ${status}).`;
  return `HTTP ${status}`;
}

/** Filters left empty in a form are not sent at all (the API would read `agent_id=` as a value). */
function querySerializer(query: Record<string, unknown>): string {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(query)) {
    if (v !== undefined && v !== null && v !== "") q.set(k, String(v));
  }
  return q.toString();
}

export function createApi(opts: ApiOptions): Api {
  return createGatewayClient({
    baseUrl: opts.baseUrl ?? "",
    token: opts.token,
    onUnauthorized: () => opts.onUnauthorized?.(),
    querySerializer,
    credentials: "omit",
    cache: "no-store",
  });
}

/** Thrown by `unwrap`: carries the API's own `error` message and the status. */
export class ApiError extends Error {
  constructor(
    message: string,
    readonly status: number,
  ) {
    super(message);
  }
}

/** `{data}` → data; anything but a 2xx → throws ApiError with the API's own `error` message. */
export async function unwrap<T>(p: Promise<{ data?: T; error?: unknown; response: Response }>): Promise<T> {
  const r = await p;
  if (!r.response.ok) {
    const e = r.error as { error?: unknown } | undefined;
    const message = typeof e?.error === "string" ? e.error : bodilessError(r.response.status);
    throw new ApiError(message, r.response.status);
  }
  return r.data as T;
}
