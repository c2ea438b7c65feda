import { invalid } from "@gw/core";
import type { CredentialKind, CredentialRow } from "@gw/db";
import { hostMatches, hostOf, type SsrfPolicy, validateUpstreamUrl } from "@gw/upstream";
import type { KindColumn } from "./repos/credentials.ts";
import { type CreateCredentialInput, DEFAULT_API_KEY_HEADER, OAUTH_KINDS, PER_USER_KIND } from "./schema.ts";

/** The columns that depend on the kind: the api_key header, or an OAuth client's settings. */
export type KindColumns = Pick<CredentialRow, KindColumn>;

/** The kind-dependent fields of a write, after PUT's "absent = unchanged" was applied. */
export type KindFields = Pick<
  CreateCredentialInput,
  | "header_name"
  | "token_url"
  | "client_id"
  | "scope"
  | "audience"
  | "auth_method"
  | "authorization_url"
  | "revocation_url"
  | "issuer"
  | "scopes"
  | "resource"
>;

export type Ssrf = { policy: SsrfPolicy; allowHttp: boolean };

const OAUTH_FIELDS = ["token_url", "client_id", "scope", "audience", "auth_method"] as const;
const PER_USER_FIELDS = ["authorization_url", "revocation_url", "issuer", "scopes", "resource"] as const;

const NO_PER_USER = { authorizationUrl: null, revocationUrl: null, issuer: null, resource: null };

/**
 * The kind-dependent columns of a credential, or 400 naming the field: `header_name` belongs to
 * api_key only; `token_url` and `client_id` are required for the OAuth kinds and refused for the
 * others. `token_url` passes the SSRF rules of an upstream URL (the dial-time guard checks it again
 * at every token request) and, with `allowed_hosts`, must be on a host the list allows: the client
 * secret goes to the token endpoint, so the list guards it too. The per-user kind is shaped by
 * `perUserColumns` (its endpoints may come from the issuer's discovery document first).
 */
export function columnsFor(
  kind: CredentialKind,
  f: KindFields,
  allowedHosts: readonly string[] | null,
  ssrf: Ssrf,
  hasSecret = true,
): KindColumns {
  if (kind === PER_USER_KIND) return perUserColumns(f, allowedHosts, ssrf, hasSecret);
  for (const field of PER_USER_FIELDS) {
    if (f[field] != null) throw invalid(`${field} is only valid for kind ${PER_USER_KIND}`);
  }
  if (!hasSecret) throw invalid("secret is required");
  const none = {
    tokenUrl: null,
    clientId: null,
    scope: null,
    audience: null,
    authMethod: null,
    ...NO_PER_USER,
  };
  if (!OAUTH_KINDS.has(kind)) {
    for (const field of OAUTH_FIELDS) {
      if (f[field] != null) throw invalid(`${field} is only valid for the oauth2 kinds`);
    }
    if (kind === "bearer") {
      if (f.header_name != null) throw invalid("header_name is only valid for kind api_key");
      return { headerName: null, ...none };
    }
    return { headerName: f.header_name ?? DEFAULT_API_KEY_HEADER, ...none };
  }
  if (f.header_name != null) throw invalid("header_name is only valid for kind api_key");
  if (f.auth_method === "none") throw invalid(`auth_method "none" is only valid for kind ${PER_USER_KIND}`);
  const { tokenUrl, clientId } = oauthClient(kind, f, allowedHosts, ssrf);
  return {
    headerName: null,
    tokenUrl,
    clientId,
    scope: f.scope ?? null,
    audience: f.audience ?? null,
    authMethod: f.auth_method ?? "client_secret_basic",
    ...NO_PER_USER,
  };
}

function oauthClient(
  kind: CredentialKind,
  f: KindFields,
  allowedHosts: readonly string[] | null,
  ssrf: Ssrf,
) {
  if (f.token_url == null) throw invalid(`token_url is required for kind ${kind}`);
  if (f.client_id == null) throw invalid(`client_id is required for kind ${kind}`);
  const tokenUrl = validateUpstreamUrl(f.token_url, { ...ssrf, field: "token_url" });
  if (allowedHosts && !hostMatches(hostOf(tokenUrl) ?? "", allowedHosts)) {
    throw invalid("token_url host is not in allowed_hosts");
  }
  return { tokenUrl, clientId: f.client_id };
}

/**
 * oauth2_authorization_code (docs/connections.md): `client_id`, the authorization and token
 * endpoints (given, or filled from `issuer`'s discovery document by the verb), an optional
 * revocation endpoint; `scopes` and `resource`. The endpoints the gateway dials (token,
 * revocation) pass the upstream SSRF rules; the authorization endpoint is opened by the person's
 * browser, so it must only be https (http with GW_ALLOW_HTTP_UPSTREAMS). Without a client secret
 * the client is public (`auth_method: "none"`).
 */
function perUserColumns(
  f: KindFields,
  allowedHosts: readonly string[] | null,
  ssrf: Ssrf,
  hasSecret: boolean,
): KindColumns {
  if (f.header_name != null) throw invalid("header_name is only valid for kind api_key");
  if (f.scope != null) throw invalid(`scope is not valid for kind ${PER_USER_KIND} (use scopes)`);
  if (f.audience != null) throw invalid(`audience is not valid for kind ${PER_USER_KIND} (use resource)`);
  if (f.authorization_url == null) {
    throw invalid(`authorization_url and token_url, or issuer, are required for kind ${PER_USER_KIND}`);
  }
  const authMethod = f.auth_method ?? (hasSecret ? "client_secret_basic" : "none");
  if (authMethod !== "none" && !hasSecret) throw invalid(`secret is required for auth_method ${authMethod}`);
  const { tokenUrl, clientId } = oauthClient(PER_USER_KIND, f, allowedHosts, ssrf);
  const revocationUrl =
    f.revocation_url == null
      ? null
      : validateUpstreamUrl(f.revocation_url, { ...ssrf, field: "revocation_url" });
  return {
    headerName: null,
    tokenUrl,
    clientId,
    scope: f.scopes?.length ? f.scopes.join(" ") : null,
    audience: null,
    authMethod,
    authorizationUrl: browserUrl(f.authorization_url, "authorization_url", ssrf.allowHttp),
    revocationUrl,
    issuer: f.issuer ?? null,
    resource: f.resource == null ? null : absoluteUrl(f.resource, "resource").href,
  };
}

function absoluteUrl(raw: string, field: string): URL {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw invalid(`${field} must be an absolute URL`);
  }
  if (url.username || url.password) throw invalid(`${field} must not carry credentials`);
  if (url.hash) throw invalid(`${field} must not have a fragment`);
  return url;
}

function browserUrl(raw: string, field: string, allowHttp: boolean): string {
  const url = absoluteUrl(raw, field);
  if (url.protocol !== "https:" && !(allowHttp && url.protocol === "http:")) {
    throw invalid(`${field} must be an https URL`);
  }
  return url.href;
}

/**
 * PUT's view of the kind fields: a field absent from the body keeps the stored value when the kind
 * stays the same (or moves between the two OAuth kinds); a change of family starts afresh.
 */
export function fieldsForPut(
  current: CredentialRow,
  kind: CredentialKind,
  input: Partial<KindFields>,
): KindFields {
  const sameFamily = kind === current.kind || (OAUTH_KINDS.has(kind) && OAUTH_KINDS.has(current.kind));
  const keep = <K extends keyof KindFields>(field: K, stored: KindFields[K]): KindFields[K] =>
    field in input ? input[field] : sameFamily ? stored : undefined;
  const perUser = kind === PER_USER_KIND && current.kind === PER_USER_KIND;
  const keepPerUser = <K extends keyof KindFields>(field: K, stored: KindFields[K]): KindFields[K] =>
    field in input ? input[field] : perUser ? stored : undefined;
  return {
    // api_key's header survives only while it stays api_key.
    header_name:
      "header_name" in input ? input.header_name : kind === current.kind ? current.headerName : null,
    token_url: keep("token_url", current.tokenUrl),
    client_id: keep("client_id", current.clientId),
    scope: perUser ? input.scope : keep("scope", current.scope),
    audience: keep("audience", current.audience),
    auth_method: keep("auth_method", current.authMethod),
    authorization_url: keepPerUser("authorization_url", current.authorizationUrl),
    revocation_url: keepPerUser("revocation_url", current.revocationUrl),
    issuer: keepPerUser("issuer", current.issuer),
    scopes: keepPerUser("scopes", current.scope ? current.scope.split(" ") : null),
    resource: keepPerUser("resource", current.resource),
  };
}
