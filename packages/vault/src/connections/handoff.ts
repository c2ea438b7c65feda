import { createHash, randomBytes } from "node:crypto";
import type { CredentialRow, Db } from "@gw/db";
import * as v from "valibot";
import { credentialRepo } from "../repos/credentials.ts";
import type { SealedGrant } from "./connect.ts";
import type { ConnectionJson } from "./manage.ts";
import { connectionRepo, handoffRepo, type Owner } from "./repo.ts";

/**
 * How long the browser the provider sent back has to hand the grant to the signed-in console
 * (docs/connections.md, Security): from the callback to `POST /v1/connections/complete`.
 */
export const CONNECT_HANDOFF_TTL_MS = 5 * 60_000;

/** The body of `POST /v1/connections/complete`: the one-time code the callback handed the browser. */
export const CompleteConnection = v.strictObject({
  code: v.pipe(
    v.string("must be a string"),
    v.minLength(1, "must not be empty"),
    v.maxLength(128, "must be at most 128 characters"),
  ),
});

const hashOf = (code: string) => createHash("sha256").update(code).digest("base64url");

/**
 * Parks the grant the callback obtained and answers the one-time code for the browser's trip to
 * the console. The grant stays sealed as a connection seals it (bound to tenant, credential and
 * the person who started the connect), so completing it copies the sealed bytes as they are.
 */
export async function handOff(db: Db, owner: Owner, grant: SealedGrant): Promise<string> {
  const code = randomBytes(32).toString("base64url");
  await handoffRepo.insert(db, {
    codeHash: hashOf(code),
    ...owner,
    ciphertext: grant.ciphertext,
    wrappedKey: grant.wrappedKey,
    kekId: grant.kekId,
    tokenExpiresAt: grant.expiresAt,
    scopes: grant.scopes,
    expiresAt: new Date(Date.now() + CONNECT_HANDOFF_TTL_MS),
  });
  return code;
}

/** What redeeming a handoff code gave. */
export type Redeemed =
  /** Unknown, spent or expired: nothing to store. */
  | { kind: "none" }
  /**
   * Started by someone else (another person or tenant): spent, nothing stored; the grant is
   * to be revoked once the transaction committed.
   */
  | { kind: "foreign"; owner: Owner; grant: SealedGrant }
  | { kind: "mine"; credential: CredentialRow; connection: ConnectionJson };

/**
 * `POST /v1/connections/complete`: redeems the code (once, whoever presents it) and stores the
 * grant only when the caller is the person who started the connect, in the caller's tenant.
 * `tx` is the audited write's transaction: the code is spent with it, stored grant or not.
 */
export async function completeConnection(
  tx: Db,
  who: { tenantId: string; sub: string },
  code: string,
): Promise<Redeemed> {
  const taken = await handoffRepo.take(tx, hashOf(code));
  if (!taken || taken.expiresAt.getTime() <= Date.now()) return { kind: "none" };
  const owner: Owner = { tenantId: taken.tenantId, sub: taken.sub, credentialId: taken.credentialId };
  const grant: SealedGrant = {
    ciphertext: taken.ciphertext,
    wrappedKey: taken.wrappedKey,
    kekId: taken.kekId,
    expiresAt: taken.tokenExpiresAt,
    scopes: taken.scopes,
  };
  if (owner.tenantId !== who.tenantId || owner.sub !== who.sub) return { kind: "foreign", owner, grant };
  const credential = await credentialRepo.get(tx, owner.tenantId, owner.credentialId);
  if (!credential) return { kind: "none" };
  const row = await connectionRepo.put(tx, owner, grant);
  return {
    kind: "mine",
    credential,
    connection: {
      credential_id: credential.id,
      credential_name: credential.name,
      status: "connected",
      scopes: row.scopes ? row.scopes.split(" ") : [],
      connected_at: row.createdAt.toISOString(),
      last_used_at: null,
    },
  };
}
