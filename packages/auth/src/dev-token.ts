import { SignJWT } from "jose";

/**
 * Mints a dev HS256 token. Only for GW_DEV_JWT_SECRET deployments and tests. It always carries
 * `exp` (the gateway refuses a token without one, docs/security.md): a TTL that is not a positive
 * whole number of seconds is an error, never a token that does not expire.
 */
export async function mintDevToken(
  secret: string,
  claims: {
    tenant: string;
    sub: string;
    scopes?: readonly string[];
    ttlSeconds?: number;
    tenantClaim?: string;
  },
): Promise<string> {
  const ttl = claims.ttlSeconds ?? 3600;
  // Always an `exp`: gateways refuse tokens without one, and a dev token should not live for ever.
  if (!Number.isSafeInteger(ttl) || ttl < 1) throw new Error("ttlSeconds must be a whole number ≥ 1");
  const jwt = new SignJWT({
    [claims.tenantClaim ?? "tenant_id"]: claims.tenant,
    ...(claims.scopes && claims.scopes.length > 0 ? { scope: claims.scopes.join(" ") } : {}),
  })
    .setProtectedHeader({ alg: "HS256", typ: "JWT" })
    .setSubject(claims.sub)
    .setIssuedAt()
    .setExpirationTime(Math.floor(Date.now() / 1000) + ttl);
  return jwt.sign(new TextEncoder().encode(secret));
}
