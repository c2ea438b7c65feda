// Sign-in with the organisation's identity provider (docs/console.md "Sign-in with the identity
// provider"): OAuth 2.0 authorization code with PKCE (S256) for a public client, found through the
// issuer's discovery document. oauth4webapi does the protocol (discovery and its issuer check, the
// authorization response's state and error, the code exchange, the token response and any ID
// token in it); this module only keeps the one-shot state of a sign-in in progress and turns the
// library's failures into messages an operator can act on.
import * as oauth from "oauth4webapi";

/** What `/console/config.json` says about sign-in; null when the deployment has no identity provider. */
export type OidcSettings = {
  issuer: string;
  client_id: string;
  scopes: string[];
  redirect_uri: string;
};

/** The sign-in this tab started: kept until the identity provider sends the browser back, then dropped. */
const PENDING = "gw.console.oidc.pending";
type Pending = { issuer: string; state: string; verifier: string };

/** The deployment's sign-in settings; null without an identity provider or when they cannot be read. */
export async function loadSettings(): Promise<OidcSettings | null> {
  try {
    const res = await fetch("/console/config.json", { credentials: "omit", cache: "no-store" });
    if (!res.ok) return null;
    const body = (await res.json()) as { oidc?: OidcSettings | null };
    return body.oidc ?? null;
  } catch {
    return null;
  }
}

/** "Sign in with <host>": the issuer's host, as the operator knows it. */
export function issuerHost(settings: OidcSettings): string {
  return new URL(settings.issuer).host;
}

/** True when this page load is the identity provider sending the browser back. */
export function isCallback(url: URL): boolean {
  return url.searchParams.has("code") || url.searchParams.has("error") || url.searchParams.has("state");
}

/**
 * Plain http is only ever a loopback issuer (the configuration refuses any other), so the library's
 * https-only rule is relaxed exactly then.
 */
function requestOptions(issuer: URL): { [oauth.allowInsecureRequests]?: boolean } {
  return issuer.protocol === "http:" ? { [oauth.allowInsecureRequests]: true } : {};
}

async function discover(issuer: URL): Promise<oauth.AuthorizationServer> {
  let as: oauth.AuthorizationServer;
  try {
    const res = await oauth.discoveryRequest(issuer, { algorithm: "oidc", ...requestOptions(issuer) });
    as = await oauth.processDiscoveryResponse(issuer, res);
  } catch (e) {
    if (e instanceof TypeError) {
      throw new Error(`The identity provider at ${issuer.host} could not be reached.`);
    }
    throw new Error(`The identity provider's discovery document was not accepted: ${messageOfOauth(e)}`);
  }
  // The page may only connect to its own origin and the issuer's (the CSP's connect-src).
  if (!as.token_endpoint || new URL(as.token_endpoint).origin !== issuer.origin) {
    throw new Error(
      `The identity provider's token endpoint is not on ${issuer.origin}; the console can only exchange codes there.`,
    );
  }
  if (!as.authorization_endpoint) {
    throw new Error("The identity provider's discovery document names no authorization endpoint.");
  }
  return as;
}

/**
 * Starts a sign-in: a fresh PKCE verifier and state, kept in this tab's sessionStorage, then the
 * browser goes to the identity provider. Resolves only if it could not go.
 */
export async function startSignIn(settings: OidcSettings): Promise<void> {
  const redirect = new URL(settings.redirect_uri);
  if (redirect.origin !== location.origin) {
    // The answer would land on another origin, whose sessionStorage holds no verifier.
    throw new Error(
      `Sign-in through the identity provider returns to ${settings.redirect_uri}: open the console there.`,
    );
  }
  const issuer = new URL(settings.issuer);
  const as = await discover(issuer);
  const verifier = oauth.generateRandomCodeVerifier();
  const state = oauth.generateRandomState();
  const pending: Pending = { issuer: settings.issuer, state, verifier };
  sessionStorage.setItem(PENDING, JSON.stringify(pending));
  const url = new URL(as.authorization_endpoint as string);
  url.searchParams.set("client_id", settings.client_id);
  url.searchParams.set("redirect_uri", settings.redirect_uri);
  url.searchParams.set("response_type", "code");
  url.searchParams.set("scope", settings.scopes.join(" "));
  url.searchParams.set("state", state);
  url.searchParams.set("code_challenge", await oauth.calculatePKCECodeChallenge(verifier));
  url.searchParams.set("code_challenge_method", "S256");
  location.assign(url.href);
}

/** Drops a sign-in in progress (sign-out, or a new sign-in by pasting a token). */
export function forgetPending() {
  try {
    sessionStorage.removeItem(PENDING);
  } catch {
    // Storage disabled: nothing was kept.
  }
}

/**
 * Completes a sign-in from the identity provider's answer in `url`: checks it belongs to the
 * sign-in this tab started (state), exchanges the code with the verifier, and returns the access
 * token and when it expires. The pending state is dropped first, so an answer is used at most once.
 */
export async function completeSignIn(
  settings: OidcSettings,
  url: URL,
): Promise<{ token: string; expiresAt?: number }> {
  const raw = sessionStorage.getItem(PENDING);
  forgetPending();
  let pending: Pending | undefined;
  try {
    pending = raw ? (JSON.parse(raw) as Pending) : undefined;
  } catch {
    pending = undefined;
  }
  if (!pending || pending.issuer !== settings.issuer) {
    throw new Error("This sign-in answer does not belong to a sign-in started in this tab. Sign in again.");
  }
  const issuer = new URL(settings.issuer);
  const as = await discover(issuer);
  const client: oauth.Client = { client_id: settings.client_id };
  let params: URLSearchParams;
  try {
    params = oauth.validateAuthResponse(as, client, url, pending.state);
  } catch (e) {
    if (e instanceof oauth.AuthorizationResponseError) {
      throw new Error(`The identity provider refused the sign-in: ${describe(e.error, e.error_description)}`);
    }
    throw new Error(
      "The sign-in answer does not match the sign-in started in this tab (its state differs). Sign in again.",
    );
  }
  let result: oauth.TokenEndpointResponse;
  try {
    const res = await oauth.authorizationCodeGrantRequest(
      as,
      client,
      oauth.None(),
      params,
      settings.redirect_uri,
      pending.verifier,
      requestOptions(issuer),
    );
    result = await oauth.processAuthorizationCodeResponse(as, client, res);
  } catch (e) {
    if (e instanceof TypeError)
      throw new Error(`The identity provider at ${issuer.host} could not be reached.`);
    if (e instanceof oauth.ResponseBodyError) {
      throw new Error(
        `The identity provider refused to issue a token: ${describe(e.error, e.error_description)}`,
      );
    }
    throw new Error(`The identity provider did not issue a token: ${messageOfOauth(e)}`);
  }
  const expiresAt = typeof result.expires_in === "number" ? Date.now() + result.expires_in * 1000 : undefined;
  return expiresAt === undefined ? { token: result.access_token } : { token: result.access_token, expiresAt };
}

/** An OAuth error code and its description, the description cut short (it is the provider's free text). */
function describe(error: string, description: string | undefined): string {
  const text = description ? `${error} (${description.slice(0, 200)})` : error;
  return `${text}.`;
}

function messageOfOauth(e: unknown): string {
  if (e instanceof oauth.OperationProcessingError) {
    // A refusal in a shape other than an OAuth error body (the library checks the shape first).
    const status = (e.cause as { status?: unknown } | undefined)?.status;
    if (typeof status === "number" && status !== 200) return `it answered HTTP ${status}.`;
    return e.message;
  }
  return e instanceof Error ? e.message : String(e);
}
