import { createHash } from "node:crypto";
import { createRemoteJWKSet, type JWTPayload, jwtVerify } from "jose";

export type Principal = Readonly<{ tenantId: string; userId: string; scopes: readonly string[] }>;

export type AuthOptions = {
  jwksUrl?: string | undefined;
  issuer?: string | undefined;
  audience?: string | undefined;
  tenantClaim: string;
  /** Dev-only HS256 secret; used only when jwksUrl is unset. */
  devSecret?: string | undefined;
  /** Upper bound on how long a verified token is remembered (ms). */
  cacheMs?: number;
};

export type TokenVerifier = (token: string) => Promise<Principal | null>;

const ASYMMETRIC = ["RS256", "ES256", "EdDSA"];
const CACHE_MAX = 10_000;

function principalOf(payload: JWTPayload, tenantClaim: string): Principal | null {
  const tenant = payload[tenantClaim];
  const sub = payload.sub;
  if (typeof tenant !== "string" || tenant === "" || typeof sub !== "string" || sub === "") return null;
  let scopes: string[] = [];
  if (typeof payload.scope === "string") scopes = payload.scope.split(" ").filter(Boolean);
  else if (Array.isArray(payload.scp)) scopes = payload.scp.filter((s): s is string => typeof s === "string");
  return Object.freeze({ tenantId: tenant, userId: sub, scopes: Object.freeze(scopes) });
}

/**
 * Builds the bearer-token verifier. JWKS keys are fetched and cached by jose (rotation: an unknown
 * `kid` triggers a refetch). Verified principals are remembered per token (keyed by its SHA-256) until the earlier of the
 * token's expiry and `cacheMs`, so the hot path pays for a signature check once per token, not
 * once per request. Any failure yields null: the caller answers 401 without saying why.
 */
export function createTokenVerifier(opts: AuthOptions): TokenVerifier {
  const verifyOpts = {
    ...(opts.issuer ? { issuer: opts.issuer } : {}),
    ...(opts.audience ? { audience: opts.audience } : {}),
  };
  let verify: (token: string) => Promise<JWTPayload>;
  if (opts.jwksUrl) {
    const jwks = createRemoteJWKSet(new URL(opts.jwksUrl), {
      cooldownDuration: 30_000,
      cacheMaxAge: 600_000,
    });
    verify = async (t) => (await jwtVerify(t, jwks, { ...verifyOpts, algorithms: ASYMMETRIC })).payload;
  } else if (opts.devSecret) {
    const key = new TextEncoder().encode(opts.devSecret);
    verify = async (t) => (await jwtVerify(t, key, { ...verifyOpts, algorithms: ["HS256"] })).payload;
  } else {
    throw new Error("no token verification configured: set GW_JWKS_URL or GW_DEV_JWT_SECRET");
  }

  const cacheMs = opts.cacheMs ?? 30_000;
  const cache = new Map<string, { principal: Principal; until: number }>();

  return async (token) => {
    const now = Date.now();
    // Keyed by the token's hash: the process never keeps bearer tokens themselves in memory.
    const key = createHash("sha256").update(token).digest("base64url");
    const hit = cache.get(key);
    if (hit) {
      if (hit.until > now) return hit.principal;
      cache.delete(key);
    }
    let payload: JWTPayload;
    try {
      payload = await verify(token);
    } catch {
      return null;
    }
    const principal = principalOf(payload, opts.tenantClaim);
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
}

/** `Authorization: Bearer <token>` → token, or null when the header is absent or malformed. */
export function bearerToken(header: string | undefined | null): string | null {
  if (!header) return null;
  const m = /^Bearer ([A-Za-z0-9\-._~+/]+=*)$/.exec(header);
  return m?.[1] ?? null;
}

export const READ_BODY_SCOPE = "invocations:read_body";
