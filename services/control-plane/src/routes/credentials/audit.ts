import { type AuditChanges, diffChanges, SECRET_CHANGE } from "@gw/audit";
import { credentialJson } from "@gw/vault";

type CredentialRow = Parameters<typeof credentialJson>[0];

/**
 * A credential's changed fields as callers see them. The secret is named when it was set (create,
 * rotation), never with a value; `hint` (its last characters) is named only too.
 */
export function credentialChanges(
  before: CredentialRow | null,
  after: CredentialRow | null,
  secretSet: boolean,
): AuditChanges {
  const view = (row: CredentialRow | null) => {
    if (!row) return null;
    const { created_at: _c, updated_at: _u, ...fields } = credentialJson(row);
    return fields;
  };
  const changes = diffChanges(view(before), view(after), ["hint"]);
  return secretSet ? { ...changes, secret: SECRET_CHANGE } : changes;
}
