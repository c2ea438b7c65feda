// The console's only door to the API. Its call shape is openapi-fetch's on purpose
// (`api.GET("/v1/agents/{id}", { params: { path: { id } } })` → `{ data } | { error }`), so that when
// @gw/client exists this module becomes `createClient<paths>({ baseUrl, headers })` plus the
// 401 hook, and no screen changes. `Routes` below is the hand-written stand-in for `paths`.
import type {
  ActivitySummary,
  Agent,
  AnalyticsRow,
  Capabilities,
  Credential,
  Invocation,
  InvocationDetail,
  List,
  Me,
  PolicyDecision,
  PolicyDocument,
  PollResult,
  Receipt,
  SettlementConfig,
} from "./types.ts";

type Query = Record<string, string | number | boolean | undefined>;
type Op = { query?: Query; body?: unknown; res: unknown };
type Json = Record<string, unknown>;

/** Method → operation per path template: the subset of the API the console calls. */
export type Routes = {
  "/v1/me": { get: { res: Me } };
  "/v1/capabilities": { get: { res: Capabilities } };
  "/v1/agents": { get: { query: Query; res: List<Agent> }; post: { body: Json; res: Agent } };
  "/v1/agents/{id}": {
    get: { res: Agent };
    patch: { body: Json; res: Agent };
    delete: { res: undefined };
  };
  "/v1/credentials": { get: { query: Query; res: List<Credential> }; post: { body: Json; res: Credential } };
  "/v1/credentials/{id}": {
    get: { res: Credential };
    put: { body: Json; res: Credential };
    delete: { res: undefined };
  };
  "/v1/invocations": { get: { query: Query; res: List<Invocation> } };
  "/v1/invocations/{id}": { get: { res: InvocationDetail } };
  "/v1/invocations/{id}/receipt": { get: { res: Receipt } };
  "/v1/proxy/{id}/invocations/{inv_id}": { get: { res: PollResult } };
  "/v1/policy": { get: { res: PolicyDocument }; put: { body: unknown; res: { version: number } } };
  "/v1/policy/decisions": { get: { query: Query; res: List<PolicyDecision> } };
  "/v1/settlement/config": { get: { res: SettlementConfig }; put: { body: Json; res: SettlementConfig } };
  "/v1/analytics": { get: { query: Query; res: { data: AnalyticsRow[] } } };
  "/v1/agent-events/summary": { get: { query: Query; res: ActivitySummary } };
};

type Method = "get" | "post" | "put" | "patch" | "delete";
type PathsWith<M extends Method> = {
  [P in keyof Routes]: M extends keyof Routes[P] ? P : never;
}[keyof Routes];
type OpOf<P extends keyof Routes, M extends Method> =
  Routes[P] extends Record<M, infer O extends Op> ? O : never;
type PathParams<P extends string> = P extends `${string}{${infer K}}${infer Rest}`
  ? { [k in K]: string } & PathParams<Rest>
  : unknown;

export type Init<P extends keyof Routes, M extends Method> = {
  params?: { path?: PathParams<P>; query?: OpOf<P, M>["query"] };
} & (OpOf<P, M> extends { body: infer B } ? { body: B } : unknown);

/** openapi-fetch's result: exactly one of `data` / `error`, and the raw response. */
export type Result<T> =
  | { data: T; error?: undefined; response: Response }
  | { data?: undefined; error: { error: string }; response: Response };

export type ApiOptions = {
  baseUrl?: string;
  token: () => string | null;
  /** Called on every 401: the token expired or was never valid. */
  onUnauthorized?: () => void;
};

/** Messages for the statuses the API answers without a body (DESIGN.md §3: 401 and 500). */
function bodilessError(status: number): string {
  if (status === 401) return "The token was rejected (missing, invalid or expired). Sign in again.";
  if (status >= 500) return `The server failed to answer (HTTP ${status}).`;
  return `HTTP ${status}`;
}

function buildUrl(base: string, path: string, init: { params?: { path?: unknown; query?: Query } }) {
  const p = (init.params?.path ?? {}) as Record<string, string>;
  let url = path.replace(/\{(\w+)\}/g, (_, k: string) => encodeURIComponent(p[k] ?? ""));
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(init.params?.query ?? {})) {
    if (v !== undefined && v !== "") q.set(k, String(v));
  }
  const qs = q.toString();
  if (qs) url += `?${qs}`;
  return `${base}${url}`;
}

export function createApi(opts: ApiOptions) {
  const base = opts.baseUrl ?? "";
  async function call<T>(
    method: string,
    path: string,
    init: Record<string, unknown> = {},
  ): Promise<Result<T>> {
    const headers: Record<string, string> = { accept: "application/json" };
    const token = opts.token();
    if (token) headers.authorization = `Bearer ${token}`;
    let body: string | undefined;
    if ("body" in init) {
      headers["content-type"] = "application/json";
      body = JSON.stringify(init.body);
    }
    const response = await fetch(buildUrl(base, path, init), {
      method,
      headers,
      ...(body === undefined ? {} : { body }),
      credentials: "omit",
      cache: "no-store",
    });
    if (response.status === 401) opts.onUnauthorized?.();
    const text = response.status === 204 ? "" : await response.text();
    let json: unknown;
    try {
      json = text ? JSON.parse(text) : undefined;
    } catch {
      json = undefined;
    }
    if (response.ok) return { data: json as T, response };
    const message =
      json && typeof json === "object" && typeof (json as { error?: unknown }).error === "string"
        ? (json as { error: string }).error
        : bodilessError(response.status);
    return { error: { error: message }, response };
  }
  return {
    GET: <P extends PathsWith<"get">>(path: P, init?: Init<P, "get">) =>
      call<OpOf<P, "get">["res"]>("GET", path, init),
    POST: <P extends PathsWith<"post">>(path: P, init: Init<P, "post">) =>
      call<OpOf<P, "post">["res"]>("POST", path, init),
    PUT: <P extends PathsWith<"put">>(path: P, init: Init<P, "put">) =>
      call<OpOf<P, "put">["res"]>("PUT", path, init),
    PATCH: <P extends PathsWith<"patch">>(path: P, init: Init<P, "patch">) =>
      call<OpOf<P, "patch">["res"]>("PATCH", path, init),
    DELETE: <P extends PathsWith<"delete">>(path: P, init?: Init<P, "delete">) =>
      call<OpOf<P, "delete">["res"]>("DELETE", path, init),
  };
}

export type Api = ReturnType<typeof createApi>;

/** Thrown by `unwrap`: carries the API's own `error` message and the status. */
export class ApiError extends Error {
  constructor(
    message: string,
    readonly status: number,
  ) {
    super(message);
  }
}

/** `{data}` → data; `{error}` → throws ApiError with the API's message. */
export async function unwrap<T>(p: Promise<Result<T>>): Promise<T> {
  const r = await p;
  if (r.error) throw new ApiError(r.error.error, r.response.status);
  return r.data as T;
}
