import { createHash } from "node:crypto";
import type { CredentialKind, CredentialRow, Db } from "@gw/db";
import type { Dispatcher } from "undici";
import { CredentialError } from "../keyring.ts";
import { credentialRepo } from "../repos/credentials.ts";
import { describeTokenFailure, requestToken, TOKEN_TIMEOUT_MS, TokenRequestError } from "./request.ts";
import { TokenCache } from "./tokens.ts";

const TOKEN_EXCHANGE = "urn:ietf:params:oauth:grant-type:token-exchange";
const ACCESS_TOKEN_TYPE = "urn:ietf:params:oauth:token-type:access_token";
/** How long a credential's kind is remembered for the transactional path's question (see below). */
const KIND_TTL_MS = 30_000;

/**
 * What a process needs to use OAuth credentials: the one upstream dispatcher (dial-time SSRF guard)
 * and the process's token cache, shared by every service of the process (the all-in-one gateway's
 * proxy and worker use one). The runtime makes one and drops a credential's tokens when the change
 * bus reports a write to it.
 */
export type OAuthClient = {
  readonly tokens: TokenCache;
  readonly dispatcher: Dispatcher;
  readonly timeoutMs: number;
  /** GW_ALLOW_HTTP_UPSTREAMS: whether per-user credentials may talk to http:// endpoints. */
  readonly allowHttp: boolean;
  /** Drops what this process holds for a credential (or the tenant's): its tokens and its kind. */
  forget(tenantId: string, id?: string): void;
  /** Whether calls through this credential exchange the caller's token (cached for KIND_TTL_MS). */
  exchangesCallerToken(db: Db, tenantId: string, credentialId: string): Promise<boolean>;
  /** The credential's kind (undefined: none), cached for KIND_TTL_MS and dropped by `forget`. */
  kindOf(db: Db, tenantId: string, credentialId: string): Promise<CredentialKind | undefined>;
  /** The credential's row (its secret still sealed), cached like `kindOf`. */
  rowOf(db: Db, tenantId: string, credentialId: string): Promise<CredentialRow | undefined>;
};

export function createOAuthClient(opts: {
  dispatcher: Dispatcher;
  timeoutMs?: number;
  allowHttp?: boolean;
}): OAuthClient {
  const tokens = new TokenCache();
  const kinds = new Map<string, { row: CredentialRow | undefined; until: number }>();
  const rowOf = async (db: Db, tenantId: string, credentialId: string) => {
    const key = `${tenantId}\u0000${credentialId}`;
    const hit = kinds.get(key);
    if (hit && hit.until > Date.now()) return hit.row;
    const row = await credentialRepo.get(db, tenantId, credentialId);
    if (kinds.size >= 10_000) kinds.clear();
    kinds.set(key, { row, until: Date.now() + KIND_TTL_MS });
    return row;
  };
  const kindOf = async (db: Db, tenantId: string, credentialId: string) =>
    (await rowOf(db, tenantId, credentialId))?.kind;
  return {
    tokens,
    dispatcher: opts.dispatcher,
    timeoutMs: opts.timeoutMs ?? TOKEN_TIMEOUT_MS,
    allowHttp: opts.allowHttp ?? false,
    kindOf,
    rowOf,
    forget(tenantId, id) {
      tokens.forget(tenantId, id);
      if (id !== undefined) kinds.delete(`${tenantId}\u0000${id}`);
      else for (const key of kinds.keys()) if (key.startsWith(`${tenantId}\u0000`)) kinds.delete(key);
    },
    async exchangesCallerToken(db, tenantId, credentialId) {
      return (await kindOf(db, tenantId, credentialId)) === "oauth2_token_exchange";
    },
  };
}

/** sha256 of the caller's token: the cache key part that stands for it (the token is never kept). */
function digestOf(token: string): string {
  return createHash("sha256").update(token).digest("base64url");
}

/**
 * The access token to inject for an OAuth credential: from the cache, or fetched (one request at a
 * time per credential version and caller) with the client secret `openSecret` unseals only then.
 * client credentials: RFC 6749 §4.4; token exchange: RFC 8693 with the caller's own access token
 * as the subject (`subjectToken`, read only for that kind; the caller's token never goes upstream).
 * Every failure is a CredentialError: `no_subject_token`, `token_unavailable`, or the secret's own.
 */
export async function accessTokenFor(opts: {
  client: OAuthClient;
  row: CredentialRow;
  openSecret: () => string;
  subjectToken?: (() => string | undefined) | undefined;
}): Promise<string> {
  const { client, row } = opts;
  let subject: string | undefined;
  let subKey = String(row.version);
  if (row.kind === "oauth2_token_exchange") {
    subject = opts.subjectToken?.();
    if (!subject) throw new CredentialError("no_subject_token");
    subKey += `\u0000${digestOf(subject)}`;
  }
  if (!row.tokenUrl || !row.clientId) throw new CredentialError("decrypt_failed");
  const { tokenUrl, clientId } = row;
  try {
    return await client.tokens.get({ tenantId: row.tenantId, id: row.id }, subKey, async () => {
      const secret = opts.openSecret();
      const form: Record<string, string> =
        subject === undefined
          ? { grant_type: "client_credentials" }
          : { grant_type: TOKEN_EXCHANGE, subject_token: subject, subject_token_type: ACCESS_TOKEN_TYPE };
      if (row.scope) form.scope = row.scope;
      if (row.audience) form.audience = row.audience;
      const post = row.authMethod === "client_secret_post";
      if (post) Object.assign(form, { client_id: clientId, client_secret: secret });
      const issued = await requestToken({
        dispatcher: client.dispatcher,
        tokenUrl,
        form,
        basic: post ? undefined : { clientId, secret },
        timeoutMs: client.timeoutMs,
      });
      return { token: issued.accessToken, expiresIn: issued.expiresIn };
    });
  } catch (e) {
    if (e instanceof TokenRequestError)
      throw new CredentialError("token_unavailable", { ...e.failure, text: describeTokenFailure(e.failure) });
    throw e;
  }
}
