import { isId, withinDeadline } from "@gw/core";
import { credentialRepo, type Db } from "@gw/db";
import { recordCredentialDecryptFailure } from "@gw/telemetry";
import { hostMatches } from "@gw/upstream";
import { CredentialError, type Keyring } from "./keyring.ts";

/**
 * The header to add to the upstream request. Lower-case name; the value holds the secret.
 * `secret` is the bare secret, for `redactSecret` over whatever the upstream sends back.
 */
export type InjectedHeader = { header: string; value: string; secret: string };

/**
 * Opens a tenant's credential just in time for one upstream call and returns the header to inject:
 * bearer → `authorization: Bearer <secret>`, api_key → `<header_name>: <secret>`. Throws
 * CredentialError when the row is missing, was wrapped by another KEK, or fails to decrypt: the
 * call must then fail with `error_class: "credential_error"`, never go out without it. Nothing is
 * cached: every call reads and decrypts afresh, so a rotation applies to the next call.
 *
 * `targetHost` is the hostname the secret is about to be sent to. A credential with
 * `allowed_hosts` opens only towards a host it allows, and never when no host is given (fail
 * closed): otherwise CredentialError("host_not_allowed"), before anything is decrypted.
 */
export async function openCredential({
  db,
  keyring,
  tenantId,
  credentialId,
  targetHost,
}: {
  db: Db;
  keyring: Keyring;
  tenantId: string;
  credentialId: string;
  targetHost?: string | undefined;
}): Promise<InjectedHeader> {
  // Bounded: a stalled store is a 503 (StoreDeadline) in time, not a call that hangs.
  const row = isId("cred", credentialId)
    ? await withinDeadline(credentialRepo.get(db, tenantId, credentialId))
    : undefined;
  if (!row) throw new CredentialError("not_found");
  if (row.allowedHosts && (targetHost === undefined || !hostMatches(targetHost, row.allowedHosts))) {
    throw new CredentialError("host_not_allowed");
  }
  let secret: string;
  try {
    secret = keyring.open({ tenantId, credentialId }, row);
  } catch (e) {
    // A sealed secret that no longer opens is an operator's problem to see (a lost or rotated KEK).
    if (e instanceof CredentialError) recordCredentialDecryptFailure();
    throw e;
  }
  if (row.kind === "bearer") return { header: "authorization", value: `Bearer ${secret}`, secret };
  if (!row.headerName) throw new CredentialError("decrypt_failed");
  return { header: row.headerName.toLowerCase(), value: secret, secret };
}
