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
  auth_method: v.nullable(v.picklist(["client_secret_basic", "client_secret_post"])),
  hint: v.string(),
  allowed_hosts: v.nullable(v.array(v.string())),
  version: v.pipe(v.number(), v.integer()),
  created_at: Time,
  updated_at: Time,
});
export type CredentialJson = v.InferOutput<typeof CredentialResource>;

/** The credential as callers see it. There is no field that could carry the secret. */
export function credentialJson(row: CredentialRow): CredentialJson {
  return {
    id: row.id,
    name: row.name,
    kind: row.kind,
    header_name: row.headerName,
    token_url: row.tokenUrl,
    client_id: row.clientId,
    scope: row.scope,
    audience: row.audience,
    auth_method: row.authMethod,
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
