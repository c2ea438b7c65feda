import type { Db } from "@gw/db";
import * as oauth from "oauth4webapi";
import * as v from "valibot";
import type { Keyring } from "../keyring.ts";
import { credentialRepo } from "../repos/credentials.ts";
import { PER_USER_KIND } from "../schema.ts";
import type { ConnectionsCtx } from "./connect.ts";
import { providerOf } from "./provider.ts";
import { connectionRepo, type Owner, type SealedTokens } from "./repo.ts";
import { openGrant } from "./tokens.ts";

const Time = v.pipe(v.string(), v.isoTimestamp());

/** A connection as its owner sees it: there is no field that could carry a token (docs/connections.md). */
export const ConnectionResource = v.object({
  credential_id: v.string(),
  credential_name: v.string(),
  status: v.picklist(["connected", "expired"]),
  scopes: v.array(v.string()),
  connected_at: Time,
  last_used_at: v.nullable(Time),
});
export type ConnectionJson = v.InferOutput<typeof ConnectionResource>;

/** The body of `POST /v1/connections`: which per-user credential to connect. */
export const CreateConnection = v.strictObject({
  credential_id: v.pipe(v.string("must be a string"), v.maxLength(64, "must be at most 64 characters")),
});

/** The answer of `POST /v1/connections`: where to send the person's browser, and until when. */
export const ConnectStartResource = v.object({ authorize_url: v.string(), expires_at: Time });

/**
 * The caller's own connections. `expired`: the access token expired and there is no refresh
 * token to renew it (the person connects again); a grant that can be refreshed is `connected`.
 */
export async function listConnections(
  db: Db,
  keyring: Keyring,
  who: { tenantId: string; sub: string },
): Promise<ConnectionJson[]> {
  const rows = await connectionRepo.listMine(db, who.tenantId, who.sub);
  return rows.map((r) => {
    let renewable = false;
    try {
      renewable = openGrant(keyring, { ...who, credentialId: r.credentialId }, r).refresh !== null;
    } catch {
      // A grant that no longer opens cannot be used either.
    }
    const live = r.expiresAt === null || r.expiresAt.getTime() > Date.now();
    return {
      credential_id: r.credentialId,
      credential_name: r.credentialName,
      status: live || renewable ? "connected" : "expired",
      scopes: r.scopes ? r.scopes.split(" ") : [],
      connected_at: r.createdAt.toISOString(),
      last_used_at: r.lastUsedAt?.toISOString() ?? null,
    };
  });
}

/**
 * Removes the caller's grant (`tx`: the audited write's transaction) and answers what to revoke
 * once it committed; undefined when there was none (404).
 */
export async function removeConnection(
  tx: Db,
  owner: Owner,
): Promise<{ revoke: (ctx: ConnectionsCtx) => Promise<void> } | undefined> {
  const removed = await connectionRepo.remove(tx, owner);
  if (!removed) return undefined;
  return { revoke: (ctx) => revokeGrant(ctx, owner, removed) };
}

/**
 * Revokes a sealed grant's tokens at the credential's revocation endpoint (RFC 7009) when it has
 * one: the refresh token revokes the grant (and, at most providers, its access tokens).
 */
export async function revokeGrant(ctx: ConnectionsCtx, owner: Owner, sealed: SealedTokens): Promise<void> {
  const credential = await credentialRepo.get(ctx.db, owner.tenantId, owner.credentialId);
  if (!credential?.revocationUrl || credential.kind !== PER_USER_KIND) return;
  const grant = openGrant(ctx.keyring, owner, sealed);
  const p = providerOf(
    credential,
    ctx.keyring.open({ tenantId: credential.tenantId, credentialId: credential.id }, credential),
    ctx,
  );
  for (const [token, hint] of [
    [grant.refresh, "refresh_token"],
    [grant.access, "access_token"],
  ] as const) {
    if (!token) continue;
    const res = await oauth.revocationRequest(p.as, p.client, p.auth, token, {
      ...p.options,
      additionalParameters: { token_type_hint: hint },
    });
    await oauth.processRevocationResponse(res);
  }
}
