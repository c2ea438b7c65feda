import type { CredentialRow } from "@gw/db";

/** The credential as callers see it. There is no field that could carry the secret. */
export function credentialJson(row: CredentialRow) {
  return {
    id: row.id,
    name: row.name,
    kind: row.kind,
    header_name: row.headerName,
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
