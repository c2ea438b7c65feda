import { isId } from "@gw/core";
import { credentialRepo, type Db } from "@gw/db";
import { CredentialError, type Keyring } from "./keyring.ts";

/** The header to add to the upstream request. Lower-case name; the value holds the secret. */
export type InjectedHeader = { header: string; value: string };

/**
 * Opens a tenant's credential just in time for one upstream call and returns the header to inject:
 * bearer → `authorization: Bearer <secret>`, api_key → `<header_name>: <secret>`. Throws
 * CredentialError when the row is missing, was wrapped by another KEK, or fails to decrypt: the
 * call must then fail with `error_class: "credential_error"`, never go out without it. Nothing is
 * cached: every call reads and decrypts afresh, so a rotation applies to the next call.
 */
export async function openCredential({
  db,
  keyring,
  tenantId,
  credentialId,
}: {
  db: Db;
  keyring: Keyring;
  tenantId: string;
  credentialId: string;
}): Promise<InjectedHeader> {
  const row = isId("cred", credentialId) ? await credentialRepo.get(db, tenantId, credentialId) : undefined;
  if (!row) throw new CredentialError("not_found");
  const secret = keyring.open({ tenantId, credentialId }, row);
  if (row.kind === "bearer") return { header: "authorization", value: `Bearer ${secret}` };
  if (!row.headerName) throw new CredentialError("decrypt_failed");
  return { header: row.headerName.toLowerCase(), value: secret };
}
