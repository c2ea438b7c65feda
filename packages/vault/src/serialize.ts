import { CREDENTIAL_KINDS, type CredentialRow } from "@gw/db";
import * as v from "valibot";

const Time = v.pipe(v.string(), v.isoTimestamp());

/**
 * The credential as callers see it: there is no field that could carry the secret. The OpenAPI
 * document is generated from this schema and `credentialJson` is typed by it.
 */
export const CredentialResource = v.object({
  id: v.pipe(v.string(), v.regex(/^cred_[0-9a-f-]{36}$/)),
  name: v.string(),
  kind: v.picklist(CREDENTIAL_KINDS),
  header_name: v.nullable(v.string()),
  /** OAuth kinds: the client's public settings (null for the static kinds). Never a token. */
  token_url: v.nullable(v.string()),
  client_id: v.nullable(v.string()),
  scope: v.nullable(v.string()),
  audience: v.nullable(v.string()),
  auth_method: v.nullable(v.picklist(["client_secret_basic", "client_secret_post", "none"])),
  /**
   * oauth2_authorization_code only (null otherwise; docs/connections.md): the provider's endpoints,
   * the issuer they were discovered from, the scopes and resource asked for, and the redirect URI
   * to register at the provider.
   */
  authorization_url: v.nullable(v.string()),
  revocation_url: v.nullable(v.string()),
  issuer: v.nullable(v.string()),
  scopes: v.nullable(v.array(v.string())),
  resource: v.nullable(v.string()),
  redirect_uri: v.nullable(v.string()),
  hint: v.string(),
  allowed_hosts: v.nullable(v.array(v.string())),
  version: v.pipe(v.number(), v.integer()),
  created_at: Time,
  updated_at: Time,
});
export type CredentialJson = v.InferOutput<typeof CredentialResource>;

/** Where a provider sends the browser back after consent: one URI for every per-user credential. */
export function connectionRedirectUri(publicUrl: string): string {
  return `${publicUrl}/v1/connections/callback`;
}

/**
 * The credential as callers see it. There is no field that could carry the secret. `publicUrl`
 * (GW_PUBLIC_URL) fills a per-user credential's `redirect_uri`.
 */
export function credentialJson(row: CredentialRow, publicUrl?: string): CredentialJson {
  const perUser = row.kind === "oauth2_authorization_code";
  return {
    id: row.id,
    name: row.name,
    kind: row.kind,
    header_name: row.headerName,
    token_url: row.tokenUrl,
    client_id: row.clientId,
    scope: perUser ? null : row.scope,
    audience: row.audience,
    auth_method: row.authMethod,
    authorization_url: row.authorizationUrl,
    revocation_url: row.revocationUrl,
    issuer: row.issuer,
    scopes: perUser ? (row.scope ? row.scope.split(" ") : []) : null,
    resource: row.resource,
    redirect_uri: perUser && publicUrl !== undefined ? connectionRedirectUri(publicUrl) : null,
    hint: row.hint,
    allowed_hosts: row.allowedHosts ?? null,
    version: row.version,
    created_at: row.createdAt.toISOString(),
    updated_at: row.updatedAt.toISOString(),
  };
}

/**
 * The last characters of a secret, to tell credentials apart: at most 4, never more than a fifth of
 * the secret, and none for secrets under 12 characters (a short secret cannot spare any).
 */
export function hintOf(secret: string): string {
  if (secret.length < 12) return "";
  return secret.slice(-Math.min(4, Math.floor(secret.length / 5)));
}
