import { invalid, LIMITS } from "@gw/core";
import type { CredentialRow } from "@gw/db";
import { callOut } from "@gw/upstream";
import * as oauth from "oauth4webapi";
import type { Dispatcher } from "undici";
import { TOKEN_TIMEOUT_MS } from "../oauth/request.ts";

/**
 * The OAuth protocol of per-user credentials is oauth4webapi's (a maintained client library):
 * this file only adapts a credential row to its types and sends its requests through the upstream
 * dispatcher, so every endpoint the gateway dials passes the dial-time SSRF guard, no redirect is
 * followed, and every answer is read under a cap.
 */
export type Provider = {
  readonly as: oauth.AuthorizationServer;
  readonly client: oauth.Client;
  readonly auth: oauth.ClientAuth;
  /** Options every request of this provider carries: the guarded fetch, http allowed or not. */
  readonly options: Pick<
    oauth.HttpRequestOptions<"POST", URLSearchParams>,
    typeof oauth.customFetch | typeof oauth.allowInsecureRequests
  >;
};

/** The fetch oauth4webapi calls: `callOut` through `dispatcher` (a bounded body), a global Response. */
export function fetchVia(dispatcher: Dispatcher, timeoutMs = TOKEN_TIMEOUT_MS) {
  // biome-ignore lint/suspicious/noExplicitAny: one fetch serves every request kind (GET and POST bodies).
  return async (url: string, init: oauth.CustomFetchOptions<any, any>): Promise<Response> => {
    const headers: Record<string, string> = {};
    new Headers(init.headers as ConstructorParameters<typeof Headers>[0]).forEach((v, k) => {
      headers[k] = v;
    });
    const answer = await callOut({
      via: dispatcher,
      url,
      method: init.method as Dispatcher.HttpMethod,
      headers,
      body: init.body === undefined || init.body === null ? null : String(init.body),
      timeoutMs,
      maxBytes: LIMITS.oauthTokenResponseMaxBytes,
    });
    // The protocol library sees what it saw of a failed fetch: the error (its code goes to the log).
    if (answer.kind === "failed") throw answer.error;
    if (answer.kind !== "answer") throw new Error("answer larger than the cap");
    const { status, body } = answer;
    const out = new Headers();
    for (const [k, v] of Object.entries(answer.headers)) {
      if (typeof v === "string") out.set(k, v);
      else if (Array.isArray(v)) for (const one of v) out.append(k, one);
    }
    return new Response(status === 204 || status === 304 ? null : new Uint8Array(body), {
      status,
      headers: out,
    });
  };
}

/** The per-user credential as oauth4webapi sees it; `secret` is the client secret (empty: public client). */
export function providerOf(
  row: CredentialRow,
  secret: string,
  net: { dispatcher: Dispatcher; allowHttp: boolean },
): Provider {
  if (!row.tokenUrl || !row.clientId || !row.authorizationUrl) throw new Error("not a per-user credential");
  const as: oauth.AuthorizationServer = {
    issuer: row.issuer ?? new URL(row.tokenUrl).origin,
    authorization_endpoint: row.authorizationUrl,
    token_endpoint: row.tokenUrl,
    ...(row.revocationUrl ? { revocation_endpoint: row.revocationUrl } : {}),
  };
  const auth =
    row.authMethod === "client_secret_post"
      ? oauth.ClientSecretPost(secret)
      : row.authMethod === "none"
        ? oauth.None()
        : oauth.ClientSecretBasic(secret);
  return {
    as,
    client: { client_id: row.clientId },
    auth,
    options: { [oauth.customFetch]: fetchVia(net.dispatcher), [oauth.allowInsecureRequests]: net.allowHttp },
  };
}

/** The endpoints an issuer's discovery document names (RFC 8414, else OpenID Connect Discovery). */
export type Discovered = {
  /** The issuer as its metadata names it: what the provider's ID tokens carry in `iss`. */
  issuer: string;
  authorization_url: string;
  token_url: string;
  revocation_url: string | null;
};

/**
 * Reads `issuer`'s discovery document through the upstream dispatcher (the issuer URL passed the
 * write-time SSRF rules already): OpenID Connect's location first, then RFC 8414's. 400 when
 * neither names an authorization and a token endpoint.
 */
export async function discoverIssuer(
  issuer: string,
  net: { dispatcher: Dispatcher; allowHttp: boolean },
): Promise<Discovered> {
  const url = new URL(issuer);
  for (const algorithm of ["oidc", "oauth2"] as const) {
    try {
      const res = await oauth.discoveryRequest(url, {
        algorithm,
        [oauth.customFetch]: fetchVia(net.dispatcher),
        [oauth.allowInsecureRequests]: net.allowHttp,
      });
      const as = await oauth.processDiscoveryResponse(url, res);
      if (as.authorization_endpoint && as.token_endpoint) {
        return {
          issuer: as.issuer,
          authorization_url: as.authorization_endpoint,
          token_url: as.token_endpoint,
          revocation_url: as.revocation_endpoint ?? null,
        };
      }
    } catch {
      // the other location, then the 400 below
    }
  }
  throw invalid("issuer discovery failed: no authorization and token endpoints found");
}
