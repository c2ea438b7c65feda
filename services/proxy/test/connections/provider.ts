import type { IncomingMessage } from "node:http";
import { startUpstream } from "@gw/testkit";
import { Events } from "oauth2-mock-server";
import { request } from "undici";
import { startAuthServer } from "../oauth-server.ts";

/**
 * The SaaS provider of the per-user credential tests: the real authorization server of the OAuth
 * suites (oauth2-mock-server: /authorize with PKCE S256 checked at /token, /token, /revoke,
 * discovery, JWKS), taught through its documented hooks what a provider does with people:
 * who signs in at /authorize (`signIn`), tokens issued to that person, refresh tokens that rotate
 * (a used or revoked one is `invalid_grant`), and what was revoked. Every token it issued is kept
 * for the leak sweep.
 */
export async function startProvider() {
  const as = await startAuthServer();
  let signingIn = "nobody";
  const codeUser = new Map<string, string>();
  /** Live refresh tokens and whose they are: one use each (rotation). */
  const refreshUser = new Map<string, string>();
  const refreshes: string[] = [];
  const revoked: string[] = [];
  const authorizeQueries: URLSearchParams[] = [];
  const tokenForms: Array<Record<string, string>> = [];

  as.server.service.on(Events.BeforeAuthorizeRedirect, (redirect: { url: URL }, req: IncomingMessage) => {
    authorizeQueries.push(new URL(req.url ?? "/", as.url).searchParams);
    const code = redirect.url.searchParams.get("code");
    if (code) codeUser.set(code, signingIn);
  });
  const userOf = (form: Record<string, string>) =>
    form.grant_type === "authorization_code"
      ? codeUser.get(form.code ?? "")
      : form.grant_type === "refresh_token"
        ? refreshUser.get(form.refresh_token ?? "")
        : undefined;
  as.server.service.on(Events.BeforeTokenSigning, (token, req) => {
    const user = userOf((req as IncomingMessage & { body: Record<string, string> }).body);
    if (user) token.payload.sub = user;
    // The server names an ID token's audience from the Basic credentials without decoding them
    // (RFC 6749 §2.3.1 form-encodes the client id; a client library encodes `-` as %2D).
    if (typeof token.payload.aud === "string") token.payload.aud = decodeURIComponent(token.payload.aud);
  });
  as.server.service.on(Events.BeforeResponse, (response, req) => {
    const form = req.body as Record<string, string>;
    if (form.grant_type !== "authorization_code" && form.grant_type !== "refresh_token") return;
    tokenForms.push(form);
    if (response.statusCode !== 200) return;
    const user = userOf(form);
    if (form.grant_type === "refresh_token") {
      refreshes.push(form.refresh_token ?? "");
      if (!user) {
        response.statusCode = 400;
        response.body = { error: "invalid_grant" };
        return;
      }
      refreshUser.delete(form.refresh_token ?? "");
    } else {
      codeUser.delete(form.code ?? "");
    }
    const body = response.body as Record<string, unknown>;
    if (user && typeof body.refresh_token === "string") refreshUser.set(body.refresh_token, user);
    as.issued.push(body.refresh_token as string, body.id_token as string);
  });
  // RFC 7009 on a route of its own (the built-in /revoke does not read the form it gets).
  as.server.service.addRoute("POST", "/revoke-tokens", (req, res) => {
    const form = (req as IncomingMessage & { body: Record<string, string> }).body;
    if (form.token) {
      revoked.push(form.token);
      refreshUser.delete(form.token);
    }
    res.writeHead(200).end();
  });

  return {
    ...as,
    authorizeUrl: `${as.url}/authorize`,
    revokeUrl: `${as.url}/revoke-tokens`,
    refreshes,
    revoked,
    authorizeQueries,
    tokenForms,
    /** Makes a refresh token useless, as a provider does when the person revokes the app there. */
    kill: (user: string) => {
      for (const [t, u] of refreshUser) if (u === user) refreshUser.delete(t);
    },
    /**
     * The person's browser: opens the authorize URL as `user` (who signs in and consents), follows
     * the provider's redirect to the gateway's callback, and answers where the gateway sent it.
     */
    consent: async (authorizeUrl: string, user: string, tamper?: (callback: URL) => URL) => {
      signingIn = user;
      const first = await request(authorizeUrl, { method: "GET" });
      await first.body.dump();
      let callback = new URL(first.headers.location as string);
      if (tamper) callback = tamper(callback);
      return follow(callback);
    },
  };
}

/** GET the gateway's callback as a browser would, answering its status and Location. */
export async function follow(callback: URL) {
  const res = await request(callback, { method: "GET" });
  const body = await res.body.text();
  return {
    status: res.statusCode,
    location: (res.headers.location as string | undefined) ?? "",
    body,
    callback,
  };
}

/**
 * The one-time code a callback handed the browser (`#/connections?complete=<code>`), which the
 * signed-in console completes; fails the test when the callback redirected anywhere else.
 */
export function handoffCode(location: string): string {
  const code = /#\/connections\?complete=([A-Za-z0-9_-]{43})$/.exec(location)?.[1];
  if (!code) throw new Error(`the callback did not hand over a code: ${location}`);
  return code;
}

export type Provider = Awaited<ReturnType<typeof startProvider>>;

/** An upstream that answers whose token of the provider it was called with: `{sub}`, or 401. */
export function startWhoami(provider: Provider) {
  return startUpstream(async (req, res) => {
    const auth = /^Bearer (\S+)$/.exec(req.headers.authorization ?? "");
    const payload = auth?.[1] ? await provider.verify(auth[1]) : null;
    res.writeHead(payload ? 200 : 401, { "content-type": "application/json" });
    res.end(JSON.stringify({ sub: payload?.sub ?? null }));
  });
}
