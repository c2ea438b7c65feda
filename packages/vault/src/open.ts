import { isId, withinDeadline } from "@gw/core";
import type { Db } from "@gw/db";
import { recordCredentialDecryptFailure } from "@gw/telemetry";
import { hostMatches, hostOf } from "@gw/upstream";
import { connectionToken } from "./connections/open.ts";
import { CredentialError, type Keyring } from "./keyring.ts";
import { accessTokenFor, type OAuthClient } from "./oauth/client.ts";
import { bearerOf, type SealedSubjectToken, sealSubjectToken } from "./oauth/subject.ts";
import { credentialRepo } from "./repos/credentials.ts";
import { OAUTH_KINDS, PER_USER_KIND } from "./schema.ts";

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
 *
 * OAuth kinds inject `authorization: Bearer <access token>`, the token from `oauth` (the process's
 * cache, else the token endpoint; see oauth/client.ts). Their `allowed_hosts` also bounds the token
 * endpoint, which receives the client secret. `subjectToken` gives the caller's own token, read only
 * for oauth2_token_exchange. Without `oauth` an OAuth credential does not open (token_unavailable).
 *
 * A per-user credential (oauth2_authorization_code) injects the access token of `sub`'s own grant
 * (connections/open.ts): without one, CredentialError("connection_required").
 */
export async function openCredential({
  db,
  keyring,
  tenantId,
  credentialId,
  targetHost,
  oauth,
  subjectToken,
  sub,
}: {
  db: Db;
  keyring: Keyring;
  tenantId: string;
  credentialId: string;
  targetHost?: string | undefined;
  oauth?: OAuthClient | undefined;
  subjectToken?: (() => string | undefined) | undefined;
  /** The caller (the token's `sub`): whose grant a per-user credential opens. */
  sub?: string | null | undefined;
}): Promise<InjectedHeader> {
  // Bounded: a stalled store is a 503 (StoreDeadline) in time, not a call that hangs.
  const row = isId("cred", credentialId)
    ? await withinDeadline(credentialRepo.get(db, tenantId, credentialId))
    : undefined;
  if (!row) throw new CredentialError("not_found");
  if (row.allowedHosts && (targetHost === undefined || !hostMatches(targetHost, row.allowedHosts))) {
    throw new CredentialError("host_not_allowed");
  }
  const openSecret = () => {
    try {
      return keyring.open({ tenantId, credentialId }, row);
    } catch (e) {
      // A sealed secret that no longer opens is an operator's problem to see (a lost or rotated KEK).
      if (e instanceof CredentialError) recordCredentialDecryptFailure();
      throw e;
    }
  };
  if (row.kind === PER_USER_KIND) {
    if (row.allowedHosts && !hostMatches(hostOf(row.tokenUrl ?? "") ?? "", row.allowedHosts)) {
      throw new CredentialError("host_not_allowed");
    }
    if (!oauth) throw new CredentialError("token_unavailable");
    if (!sub) throw new CredentialError("connection_required");
    const token = await connectionToken({ db, keyring, ...oauth }, row, sub);
    return { header: "authorization", value: `Bearer ${token}`, secret: token };
  }
  if (OAUTH_KINDS.has(row.kind)) {
    if (row.allowedHosts && !hostMatches(hostOf(row.tokenUrl ?? "") ?? "", row.allowedHosts)) {
      throw new CredentialError("host_not_allowed");
    }
    if (!oauth) throw new CredentialError("token_unavailable");
    const token = await accessTokenFor({ client: oauth, row, openSecret, subjectToken });
    return { header: "authorization", value: `Bearer ${token}`, secret: token };
  }
  const secret = openSecret();
  if (row.kind === "bearer") return { header: "authorization", value: `Bearer ${secret}`, secret };
  if (!row.headerName) throw new CredentialError("decrypt_failed");
  return { header: row.headerName.toLowerCase(), value: secret, secret };
}

/**
 * What a transactional call stores for its worker when its credential exchanges the caller's token
 * (oauth2_token_exchange): the caller's bearer token, sealed to this tenant and invocation. For any
 * other credential, nothing: the caller's token is kept only where it is needed.
 */
export async function subjectTokenForJob(opts: {
  db: Db;
  keyring: Keyring;
  oauth: OAuthClient;
  tenantId: string;
  invocationId: string;
  credentialId: string | null;
  authorization: string | undefined;
}): Promise<SealedSubjectToken | undefined> {
  if (!opts.credentialId || !isId("cred", opts.credentialId)) return undefined;
  if (!(await opts.oauth.exchangesCallerToken(opts.db, opts.tenantId, opts.credentialId))) return undefined;
  const token = bearerOf(opts.authorization);
  return token === undefined ? undefined : sealSubjectToken(opts.keyring, opts, token);
}
