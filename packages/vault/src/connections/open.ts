import { LIMITS, withinDeadline } from "@gw/core";
import type { CredentialRow, Db } from "@gw/db";
import * as oauth from "oauth4webapi";
import type { Dispatcher } from "undici";
import { CredentialError, type Keyring } from "../keyring.ts";
import type { TokenCache } from "../oauth/tokens.ts";
import { EXPIRY_MARGIN_S } from "../oauth/tokens.ts";
import { expiryOf } from "./connect.ts";
import { providerOf } from "./provider.ts";
import { connectionRepo, type Owner } from "./repo.ts";
import { type Grant, openGrant, sealGrant, usableToken } from "./tokens.ts";

/** Lifetime assumed for an access token whose provider gave no `expires_in` (it is re-read after). */
const UNKNOWN_LIFETIME_S = 300;

export type OpenConnectionDeps = {
  db: Db;
  keyring: Keyring;
  tokens: TokenCache;
  dispatcher: Dispatcher;
  allowHttp: boolean;
};

/**
 * The caller's access token for a per-user credential (docs/connections.md): this process's cache
 * (single flight per person and credential), else the stored grant, refreshed first when it
 * expires within 30 s. Throws CredentialError: `connection_required` (no grant, or the provider
 * refused the refresh), `token_unavailable` (the token endpoint failed otherwise), or the seal's.
 */
export async function connectionToken(
  deps: OpenConnectionDeps,
  credential: CredentialRow,
  sub: string,
): Promise<string> {
  const owner: Owner = { tenantId: credential.tenantId, sub, credentialId: credential.id };
  return deps.tokens.get(credential, `conn\u0000${credential.version}\u0000${sub}`, async () => {
    const row = await withinDeadline(connectionRepo.get(deps.db, owner));
    if (!row) throw new CredentialError("connection_required");
    const fresh = secondsLeft(row.expiresAt);
    if (fresh > EXPIRY_MARGIN_S) {
      void connectionRepo.touch(deps.db, owner).catch(() => {});
      return { token: openGrant(deps.keyring, owner, row).access, expiresIn: fresh };
    }
    return refresh(deps, credential, owner);
  });
}

function secondsLeft(expiresAt: Date | null): number {
  if (expiresAt === null) return UNKNOWN_LIFETIME_S;
  return Math.floor((expiresAt.getTime() - Date.now()) / 1000);
}

type Refreshed = { token: string; expiresIn: number } | "required" | "unavailable";

/**
 * One refresh per grant at a time across every replica: the row is locked for the exchange (a
 * second caller waits, then finds the rotated grant fresh and uses it). A provider's
 * `invalid_grant` removes the dead grant: the person connects again.
 */
async function refresh(deps: OpenConnectionDeps, credential: CredentialRow, owner: Owner) {
  const outcome = await deps.db.transaction(async (tx): Promise<Refreshed> => {
    const row = await connectionRepo.lock(tx, owner);
    if (!row) return "required";
    const grant = openGrant(deps.keyring, owner, row);
    const left = secondsLeft(row.expiresAt);
    if (left > EXPIRY_MARGIN_S) return { token: grant.access, expiresIn: left };
    if (!grant.refresh) {
      await connectionRepo.remove(tx, owner);
      return "required";
    }
    const next = await requestRefresh(deps, credential, grant.refresh);
    if (next === "invalid_grant") {
      await connectionRepo.remove(tx, owner);
      return "required";
    }
    if (next === "unavailable") return "unavailable";
    const rotated: Grant = { access: next.access_token, refresh: next.refresh_token ?? grant.refresh };
    const expiresAt = expiryOf(next.expires_in);
    await connectionRepo.update(tx, owner, {
      ...sealGrant(deps.keyring, owner, rotated),
      expiresAt,
      ...(next.scope ? { scopes: next.scope } : {}),
    });
    return { token: rotated.access, expiresIn: secondsLeft(expiresAt) };
  });
  if (outcome === "required") throw new CredentialError("connection_required");
  if (outcome === "unavailable") {
    throw new CredentialError("token_unavailable", {
      kind: "status",
      text: "token endpoint refused the refresh",
    });
  }
  return outcome;
}

async function requestRefresh(
  deps: OpenConnectionDeps,
  credential: CredentialRow,
  refreshToken: string,
): Promise<oauth.TokenEndpointResponse | "invalid_grant" | "unavailable"> {
  const secret = deps.keyring.open(
    { tenantId: credential.tenantId, credentialId: credential.id },
    credential,
  );
  const p = providerOf(credential, secret, deps);
  try {
    const res = await oauth.refreshTokenGrantRequest(p.as, p.client, p.auth, refreshToken, {
      ...p.options,
      ...(credential.resource ? { additionalParameters: { resource: credential.resource } } : {}),
    });
    const tokens = await oauth.processRefreshTokenResponse(p.as, p.client, res);
    return usableToken(tokens.access_token, LIMITS.credentialSecretMaxBytes) ? tokens : "unavailable";
  } catch (e) {
    if (e instanceof oauth.ResponseBodyError && e.error === "invalid_grant") return "invalid_grant";
    return "unavailable";
  }
}
