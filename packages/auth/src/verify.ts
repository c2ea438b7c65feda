import { hash } from "node:crypto";
import { decodeProtectedHeader, errors, type JWTPayload, jwtVerify } from "jose";
import { type Principal, principalOf } from "./claims.ts";
import { createJwksSource } from "./jwks.ts";

export type { Principal } from "./claims.ts";

export type AuthOptions = {
  jwksUrl?: string | undefined;
  issuer?: string | undefined;
  audience?: string | undefined;
  tenantClaim: string;
  /** Refuse a token without `exp` (it would never expire); default true. */
  requireExp?: boolean;
  /** Dev-only HS256 secret; used only when jwksUrl is unset. */
  devSecret?: string | undefined;
  /** Upper bound on how long a verified token is remembered (ms). */
  cacheMs?: number;
  /** Minimum time between two JWKS fetches (ms); 5 s by default (docs/security.md, JWKS refetch). */
  jwksMinRefetchMs?: number;
};

/** A token remembered from an earlier call is answered at once, without a promise. */
export type TokenVerifier = (token: string) => Principal | null | Promise<Principal | null>;

const ASYMMETRIC = ["RS256", "ES256", "EdDSA"];
const CACHE_MAX = 10_000;
/**
 * Header parameters that point at a key. The key always comes from configuration (the JWKS or the
 * dev secret), never from the token; a token that tries to name its own key is refused outright.
 */
const KEY_POINTERS = ["jku", "x5u", "jwk", "x5c"] as const;

function headerOf(token: string) {
  const header = decodeProtectedHeader(token);
  if (KEY_POINTERS.some((k) => k in header)) throw new Error("token names its own key");
  return header;
}

/**
 * Builds the bearer-token verifier. JWKS keys come from `createJwksSource` (an unknown `kid`
 * refetches at most once per 5 s). Verified principals are remembered per token (keyed by its
 * SHA-256) until the earlier of the token's expiry and `cacheMs`, so the hot path pays for a
 * signature check once per token, not once per request. Any failure yields null: the caller
 * answers 401 without saying why.
 */
export function createTokenVerifier(opts: AuthOptions): TokenVerifier {
  const verifyOpts = {
    ...(opts.issuer ? { issuer: opts.issuer } : {}),
    ...(opts.audience ? { audience: opts.audience } : {}),
  };
  let verify: (token: string) => Promise<JWTPayload>;
  if (opts.jwksUrl) {
    const jwks = createJwksSource(
      new URL(opts.jwksUrl),
      opts.jwksMinRefetchMs !== undefined ? { minRefetchMs: opts.jwksMinRefetchMs } : {},
    );
    verify = async (t) => {
      const header = headerOf(t);
      // The algorithm must be asymmetric: an HS256 token "signed" with a public key is refused here.
      if (typeof header.alg !== "string" || !ASYMMETRIC.includes(header.alg)) throw new Error("alg");
      const keys = await jwks.candidates(header);
      let last: unknown = new Error("no key for this token");
      // More than one candidate only when the issuer published duplicate `kid`s: try each.
      for (const key of keys) {
        try {
          return (await jwtVerify(t, key, { ...verifyOpts, algorithms: [header.alg] })).payload;
        } catch (e) {
          last = e;
          if (!(e instanceof errors.JWSSignatureVerificationFailed)) break;
        }
      }
      throw last;
    };
  } else if (opts.devSecret) {
    const key = new TextEncoder().encode(opts.devSecret);
    verify = async (t) => {
      headerOf(t);
      return (await jwtVerify(t, key, { ...verifyOpts, algorithms: ["HS256"] })).payload;
    };
  } else {
    throw new Error("no token verification configured: set GW_JWKS_URL or GW_DEV_JWT_SECRET");
  }

  const cacheMs = opts.cacheMs ?? 30_000;
  const cache = new Map<string, { principal: Principal; until: number }>();

  const verifyNew = async (token: string, key: string, now: number): Promise<Principal | null> => {
    let payload: JWTPayload;
    try {
      payload = await verify(token);
    } catch {
      return null;
    }
    const principal = principalOf(payload, opts.tenantClaim, now, { requireExp: opts.requireExp ?? true });
    if (!principal) return null;
    const until = Math.min(
      now + cacheMs,
      typeof payload.exp === "number" ? payload.exp * 1000 : now + cacheMs,
    );
    if (cache.size >= CACHE_MAX) {
      // Drop the oldest entry; Map keeps insertion order.
      const oldest = cache.keys().next().value;
      if (oldest !== undefined) cache.delete(oldest);
    }
    cache.set(key, { principal, until });
    return principal;
  };
  return (token) => {
    const now = Date.now();
    // Keyed by the token's hash: the process never keeps bearer tokens themselves in memory
    // (the one-shot `hash`: no Hash object per call).
    const key = hash("sha256", token, "base64url");
    const hit = cache.get(key);
    if (hit) {
      if (hit.until > now) return hit.principal;
      cache.delete(key);
    }
    return verifyNew(token, key, now);
  };
}

/** A token68 (RFC 7235 §2.1), the form of a bearer token (RFC 6750 §2.1). */
const TOKEN68 = /^[A-Za-z0-9\-._~+/]+=*$/;
/** `Bearer` and its credentials; the scheme name is case-insensitive (RFC 7235 §2.1). */
const BEARER = /^bearer(?: +(.*))?$/i;

/**
 * What an `Authorization` header presents: the bearer token; `"malformed"` for Bearer credentials
 * that are not a token (two tokens, a space inside one); null when it presents no bearer token at
 * all (no header, another scheme, `Bearer` alone).
 */
export function bearerToken(header: string | undefined | null): string | "malformed" | null {
  if (!header) return null;
  const m = BEARER.exec(header);
  const credentials = m?.[1]?.trim();
  if (!credentials) return null;
  return TOKEN68.test(credentials) ? credentials : "malformed";
}

/** The error code of a Bearer challenge (RFC 6750 §3.1); the gateway only ever says invalid_token. */
export type BearerError = "invalid_token";

/**
 * Authenticates an `Authorization` header. Refused: `error` is `invalid_token` when a bearer token
 * was presented (malformed, expired, wrong key, any rule of docs/security.md) and undefined when none
 * was: RFC 6750 §3 gives a request without credentials a challenge with no error code.
 */
export function authenticate(
  verify: TokenVerifier,
  header: string | undefined | null,
): Authenticated | Promise<Authenticated> {
  const token = bearerToken(header);
  if (token === null) return { principal: null, error: undefined };
  const principal = token === "malformed" ? null : verify(token);
  // A remembered token (most calls): answered without a promise.
  return principal instanceof Promise ? principal.then(authenticated) : authenticated(principal);
}

/** What `authenticate` found: a principal, or the challenge's error code. */
export type Authenticated =
  | { principal: Principal; error?: undefined }
  | { principal: null; error: BearerError | undefined };

const authenticated = (principal: Principal | null): Authenticated =>
  principal ? { principal } : { principal: null, error: "invalid_token" };

export const READ_BODY_SCOPE = "invocations:read_body";
