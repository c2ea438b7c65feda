import type { JWTPayload } from "jose";

export type Principal = Readonly<{
  tenantId: string;
  userId: string;
  scopes: readonly string[];
  /** The token's verified claims, as policy conditions read them (`principal.claims`). */
  claims: Readonly<Record<string, unknown>>;
}>;

/**
 * Tenant ids travel in headers (`X-Gateway-Tenant-ID`), Redis keys and SQL: one conservative
 * alphabet keeps all three safe (a non-Latin-1 tenant id used to fail every upstream call with 502).
 */
export const TENANT_ID_RE = /^[A-Za-z0-9][A-Za-z0-9._:@-]{0,127}$/;
export const SUB_MAX_BYTES = 256;
/** How far in the future `iat` may be (clock skew between issuer and gateway). */
export const IAT_MAX_SKEW_SECONDS = 60;

/** C0, DEL and C1 controls; a NUL would also make Postgres refuse the row. */
function hasControl(s: string): boolean {
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x20 || (c >= 0x7f && c <= 0x9f)) return true;
  }
  return false;
}

/**
 * The principal a verified payload names, or null when the payload breaks a rule of docs/security.md
 * Refused (docs/security.md, Tokens): tenant outside TENANT_ID_RE, `sub` empty, with control characters or over 256
 * bytes, `iat` more than 60 s ahead of `nowMs`, no `exp` while `requireExp` (jose checks a present
 * `exp` but accepts its absence, and such a token would never expire).
 */
export function principalOf(
  payload: JWTPayload,
  tenantClaim: string,
  nowMs: number,
  opts: { requireExp: boolean } = { requireExp: true },
): Principal | null {
  const tenant = payload[tenantClaim];
  const sub = payload.sub;
  if (typeof tenant !== "string" || !TENANT_ID_RE.test(tenant)) return null;
  if (typeof sub !== "string" || sub === "" || hasControl(sub)) return null;
  if (Buffer.byteLength(sub, "utf8") > SUB_MAX_BYTES) return null;
  if (opts.requireExp && (typeof payload.exp !== "number" || !Number.isFinite(payload.exp))) return null;
  if (payload.iat !== undefined) {
    if (typeof payload.iat !== "number" || !Number.isFinite(payload.iat)) return null;
    if (payload.iat > nowMs / 1000 + IAT_MAX_SKEW_SECONDS) return null;
  }
  let scopes: string[] = [];
  if (typeof payload.scope === "string") scopes = payload.scope.split(" ").filter(Boolean);
  else if (Array.isArray(payload.scp)) scopes = payload.scp.filter((s): s is string => typeof s === "string");
  return Object.freeze({ tenantId: tenant, userId: sub, scopes: Object.freeze(scopes), claims: payload });
}
