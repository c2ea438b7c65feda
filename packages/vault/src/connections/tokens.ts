import type { ConnectionRow } from "@gw/db";
import type { Keyring } from "../keyring.ts";
import type { Owner } from "./repo.ts";

/** What a connection row seals: the access token and, when the provider gave one, the refresh token. */
export type Grant = { access: string; refresh: string | null };

/** Bound to tenant, credential and person: a sealed grant copied to another row does not open. */
export const grantBinding = (o: Owner) => ({
  tenantId: o.tenantId,
  credentialId: `connection:${o.credentialId}:${o.sub}`,
});
/** The PKCE verifier of a connect in progress: bound like a grant, under a label of its own. */
export const verifierBinding = (o: Owner) => ({
  tenantId: o.tenantId,
  credentialId: `connection-state:${o.credentialId}:${o.sub}`,
});

export function sealGrant(keyring: Keyring, o: Owner, g: Grant) {
  return keyring.seal(grantBinding(o), JSON.stringify({ a: g.access, r: g.refresh }));
}

/** Throws CredentialError (decrypt_failed, unknown_kek) when it does not open. */
export function openGrant(
  keyring: Keyring,
  o: Owner,
  row: Pick<ConnectionRow, "ciphertext" | "wrappedKey" | "kekId">,
): Grant {
  const { a, r } = JSON.parse(keyring.open(grantBinding(o), row)) as { a: string; r: string | null };
  return { access: a, refresh: r };
}

export function sealVerifier(keyring: Keyring, o: Owner, verifier: string) {
  return keyring.seal(verifierBinding(o), verifier);
}

export function openVerifier(
  keyring: Keyring,
  o: Owner,
  row: Pick<ConnectionRow, "ciphertext" | "wrappedKey" | "kekId">,
): string {
  return keyring.open(verifierBinding(o), row);
}

/** An access token becomes one header value: printable ASCII, bounded like a static secret. */
export function usableToken(token: unknown, max: number): token is string {
  return typeof token === "string" && token.length > 0 && token.length <= max && /^[\x21-\x7e]+$/.test(token);
}
