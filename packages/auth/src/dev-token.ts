import { SignJWT } from "jose";

/** Mints a dev HS256 token. Only for GW_DEV_JWT_SECRET deployments and tests. */
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
  const jwt = new SignJWT({
    [claims.tenantClaim ?? "tenant_id"]: claims.tenant,
    ...(claims.scopes && claims.scopes.length > 0 ? { scope: claims.scopes.join(" ") } : {}),
  })
    .setProtectedHeader({ alg: "HS256", typ: "JWT" })
    .setSubject(claims.sub)
    .setIssuedAt()
    .setExpirationTime(Math.floor(Date.now() / 1000) + (claims.ttlSeconds ?? 3600));
  return jwt.sign(new TextEncoder().encode(secret));
}
