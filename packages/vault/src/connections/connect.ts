import { createHash } from "node:crypto";
import { invalid, isId, LIMITS, notFound } from "@gw/core";
import type { CredentialRow, Db } from "@gw/db";
import * as oauth from "oauth4webapi";
import type { Dispatcher } from "undici";
import type { Keyring } from "../keyring.ts";
import { credentialRepo } from "../repos/credentials.ts";
import { PER_USER_KIND } from "../schema.ts";
import { connectionRedirectUri } from "../serialize.ts";
import { providerOf } from "./provider.ts";
import { type connectionRepo, type Owner, stateRepo } from "./repo.ts";
import { openVerifier, sealGrant, sealVerifier, usableToken } from "./tokens.ts";

/** How long a connect may take, from `POST /v1/connections` to the provider's redirect back. */
export const CONNECT_STATE_TTL_MS = 10 * 60_000;

/** What the verbs of this room need from the process. */
export type ConnectionsCtx = {
  db: Db;
  keyring: Keyring;
  dispatcher: Dispatcher;
  allowHttp: boolean;
  publicUrl: string;
};

const hashOf = (state: string) => createHash("sha256").update(state).digest("base64url");

/** The tenant's per-user credential, or 404 (another tenant's, unknown) / 400 (another kind). */
export async function perUserCredential(db: Db, tenantId: string, id: string): Promise<CredentialRow> {
  const row = isId("cred", id) ? await credentialRepo.get(db, tenantId, id) : undefined;
  if (!row) throw notFound("credential");
  if (row.kind !== PER_USER_KIND)
    throw invalid(`credential_id must name a credential of kind ${PER_USER_KIND}`);
  return row;
}

/**
 * Starts a connect for the caller (docs/connections.md): authorization code with PKCE S256, a
 * `state` that serves once, is bound to tenant, sub and credential and lives ten minutes, and the
 * credential's `resource` (RFC 8707). Only the state's hash and the sealed verifier are stored.
 */
export async function startConnection(
  ctx: ConnectionsCtx,
  who: { tenantId: string; sub: string },
  credentialId: string,
): Promise<{ authorize_url: string; expires_at: string }> {
  const row = await perUserCredential(ctx.db, who.tenantId, credentialId);
  const owner: Owner = { ...who, credentialId: row.id };
  const state = oauth.generateRandomState();
  const verifier = oauth.generateRandomCodeVerifier();
  const expiresAt = new Date(Date.now() + CONNECT_STATE_TTL_MS);
  await stateRepo.insert(ctx.db, {
    stateHash: hashOf(state),
    ...owner,
    ...sealVerifier(ctx.keyring, owner, verifier),
    expiresAt,
  });
  const url = new URL(row.authorizationUrl ?? "");
  url.searchParams.set("response_type", "code");
  url.searchParams.set("client_id", row.clientId ?? "");
  url.searchParams.set("redirect_uri", connectionRedirectUri(ctx.publicUrl));
  url.searchParams.set("state", state);
  url.searchParams.set("code_challenge", await oauth.calculatePKCECodeChallenge(verifier));
  url.searchParams.set("code_challenge_method", "S256");
  if (row.scope) url.searchParams.set("scope", row.scope);
  if (row.resource) url.searchParams.set("resource", row.resource);
  return { authorize_url: url.href, expires_at: expiresAt.toISOString() };
}

/** A callback that stores nothing; `reason` is short and safe to put in the console's URL. */
export class ConnectFailed extends Error {
  override name = "ConnectFailed";
  constructor(
    readonly reason: "invalid_state" | "denied" | "exchange_failed",
    readonly credential?: CredentialRow,
    /** For the log: the protocol library's error code (never a token or an answer's bytes). */
    readonly code?: string,
  ) {
    super(`connect failed: ${reason}`);
  }
}

/**
 * The provider's redirect back (`GET /v1/connections/callback?code&state`): redeems the state
 * (once; a replayed, expired or unknown one is `invalid_state`), exchanges the code with the
 * sealed verifier, and seals the grant. Answers the owner, the credential and the sealed grant,
 * which is not stored as a connection here: `handOff` parks it until the signed-in console of the
 * same person completes it (the browser that followed the redirect may not be theirs). The state
 * is spent even when the exchange then fails: a state never serves twice.
 */
export async function finishConnection(
  ctx: ConnectionsCtx,
  query: URLSearchParams,
): Promise<{ owner: Owner; credential: CredentialRow; grant: SealedGrant }> {
  const state = query.get("state");
  if (!state || state.length > 512) throw new ConnectFailed("invalid_state");
  const taken = await stateRepo.take(ctx.db, hashOf(state));
  if (!taken || taken.expiresAt.getTime() <= Date.now()) throw new ConnectFailed("invalid_state");
  const owner: Owner = { tenantId: taken.tenantId, sub: taken.sub, credentialId: taken.credentialId };
  const row = await credentialRepo.get(ctx.db, owner.tenantId, owner.credentialId);
  if (!row || row.kind !== PER_USER_KIND) throw new ConnectFailed("invalid_state");
  const verifier = openVerifier(ctx.keyring, owner, taken);
  const p = providerOf(row, ctx.keyring.open({ tenantId: row.tenantId, credentialId: row.id }, row), ctx);
  let params: URLSearchParams;
  try {
    params = oauth.validateAuthResponse(p.as, p.client, query, state);
  } catch {
    throw new ConnectFailed("denied", row);
  }
  let tokens: oauth.TokenEndpointResponse;
  try {
    const res = await oauth.authorizationCodeGrantRequest(
      p.as,
      p.client,
      p.auth,
      params,
      connectionRedirectUri(ctx.publicUrl),
      verifier,
      { ...p.options, ...(row.resource ? { additionalParameters: { resource: row.resource } } : {}) },
    );
    tokens = await oauth.processAuthorizationCodeResponse(p.as, p.client, res);
  } catch (e) {
    throw new ConnectFailed("exchange_failed", row, codeOf(e));
  }
  if (!usableToken(tokens.access_token, LIMITS.credentialSecretMaxBytes)) {
    throw new ConnectFailed("exchange_failed", row);
  }
  const grant: SealedGrant = {
    ...sealGrant(ctx.keyring, owner, { access: tokens.access_token, refresh: tokens.refresh_token ?? null }),
    expiresAt: expiryOf(tokens.expires_in),
    scopes: tokens.scope ?? row.scope ?? null,
  };
  return { owner, credential: row, grant };
}

export type SealedGrant = Parameters<typeof connectionRepo.put>[2];

/** The library's error code (`OAUTH_…`) or the OAuth error the provider answered; nothing else. */
function codeOf(e: unknown): string | undefined {
  if (e instanceof oauth.ResponseBodyError) return `provider answered ${e.error}`;
  const code = (e as { code?: unknown } | null)?.code;
  return typeof code === "string" && /^[A-Z_]{1,64}$/.test(code) ? code : undefined;
}

/** When an access token issued now with `expires_in` expires; null when the provider did not say. */
export function expiryOf(expiresIn: number | undefined): Date | null {
  return typeof expiresIn === "number" && Number.isFinite(expiresIn)
    ? new Date(Date.now() + expiresIn * 1000)
    : null;
}
