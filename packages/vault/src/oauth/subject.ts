import type { Keyring } from "../keyring.ts";

/** The caller's token sealed into a transactional call's stored request (base64 fields, for JSON). */
export type SealedSubjectToken = { ciphertext: string; wrappedKey: string; kekId: string };

/** Bound to the tenant and the invocation: a sealed token copied to another call does not open. */
const bindingOf = (tenantId: string, invocationId: string) => ({
  tenantId,
  credentialId: `subject:${invocationId}`,
});

/** The token of an `Authorization: Bearer <token>` header, or undefined. */
export function bearerOf(authorization: string | undefined): string | undefined {
  const m = authorization === undefined ? null : /^bearer +(\S+)\s*$/i.exec(authorization);
  return m?.[1];
}

/**
 * Seals the caller's token for the worker, under a fresh data key like a credential's secret
 * (docs/adr/0027-oauth-upstream-credentials.md): only for a call whose credential exchanges it, and
 * gone when the stored request is purged after the call ended.
 */
export function sealSubjectToken(
  keyring: Keyring,
  at: { tenantId: string; invocationId: string },
  token: string,
): SealedSubjectToken {
  const sealed = keyring.seal(bindingOf(at.tenantId, at.invocationId), token);
  return {
    ciphertext: sealed.ciphertext.toString("base64"),
    wrappedKey: sealed.wrappedKey.toString("base64"),
    kekId: sealed.kekId,
  };
}

/** The sealed caller token of a stored call; throws CredentialError when it does not open. */
export function openSubjectToken(
  keyring: Keyring,
  at: { tenantId: string; invocationId: string },
  sealed: SealedSubjectToken,
): string {
  return keyring.open(bindingOf(at.tenantId, at.invocationId), {
    ciphertext: Buffer.from(sealed.ciphertext, "base64"),
    wrappedKey: Buffer.from(sealed.wrappedKey, "base64"),
    kekId: sealed.kekId,
  });
}

/**
 * The caller's token a stored transactional call carries (see subjectTokenForJob), unsealed for the
 * worker's token exchange; undefined when it carries none. Throws CredentialError when it does not
 * open (another KEK, tampering).
 */
export function subjectTokenOf(
  job: { tenantId: string; invocationId: string; subjectToken?: SealedSubjectToken | undefined },
  keyring: Keyring,
): string | undefined {
  return job.subjectToken ? openSubjectToken(keyring, job, job.subjectToken) : undefined;
}
