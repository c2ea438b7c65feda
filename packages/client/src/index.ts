import createClient, { type Client, type ClientOptions, type Middleware } from "openapi-fetch";

export type { Middleware } from "openapi-fetch";

import type { components, paths } from "./schema.ts";

export type { components, paths } from "./schema.ts";
export { AGENT_PROTOCOLS, AUDIT_ACTIONS, RECORDED_FIELDS } from "./values.ts";
export type GatewayClient = Client<paths>;
/** A named schema of the API, e.g. `Schema<"Agent">`. */
export type Schema<N extends keyof components["schemas"]> = components["schemas"][N];

export type GatewayClientOptions = Omit<ClientOptions, "baseUrl"> & {
  /** The gateway's base URL (GW_PUBLIC_URL), without a trailing slash. */
  baseUrl: string;
  /** The bearer token, or a function asked before every request (tokens expire). */
  token?: string | (() => string | null | undefined);
  /** Called on every 401 (expired or invalid token). */
  onUnauthorized?: (response: Response) => void;
};

/**
 * A typed client of the gateway API: openapi-fetch over the generated `paths`, so a call's path,
 * parameters, body and answer are checked against the OpenAPI document at compile time.
 * `const { data, error } = await gw.GET("/v1/agents/{id}", { params: { path: { id } } })`.
 */
export function createGatewayClient(opts: GatewayClientOptions): GatewayClient {
  const { token, onUnauthorized, ...rest } = opts;
  const client = createClient<paths>(rest);
  const auth: Middleware = {
    onRequest({ request }) {
      const t = typeof token === "function" ? token() : token;
      if (t) request.headers.set("Authorization", `Bearer ${t}`);
      return request;
    },
    onResponse({ response }) {
      if (response.status === 401) onUnauthorized?.(response);
      return undefined;
    },
  };
  client.use(auth);
  return client;
}
