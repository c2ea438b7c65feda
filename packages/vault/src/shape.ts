import { invalid } from "@gw/core";
import type { CredentialKind, CredentialRow } from "@gw/db";
import { hostMatches, hostOf, type SsrfPolicy, validateUpstreamUrl } from "@gw/upstream";
import { type CreateCredentialInput, DEFAULT_API_KEY_HEADER, OAUTH_KINDS } from "./schema.ts";

/** The columns that depend on the kind: the api_key header, or an OAuth client's settings. */
export type KindColumns = Pick<
  CredentialRow,
  "headerName" | "tokenUrl" | "clientId" | "scope" | "audience" | "authMethod"
>;

/** The kind-dependent fields of a write, after PUT's "absent = unchanged" was applied. */
export type KindFields = Pick<
  CreateCredentialInput,
  "header_name" | "token_url" | "client_id" | "scope" | "audience" | "auth_method"
>;

export type Ssrf = { policy: SsrfPolicy; allowHttp: boolean };

const OAUTH_FIELDS = ["token_url", "client_id", "scope", "audience", "auth_method"] as const;

/**
 * The kind-dependent columns of a credential, or 400 naming the field: `header_name` belongs to
 * api_key only; `token_url` and `client_id` are required for the OAuth kinds and refused for the
 * others. `token_url` passes the SSRF rules of an upstream URL (the dial-time guard checks it again
 * at every token request) and, with `allowed_hosts`, must be on a host the list allows: the client
 * secret goes to the token endpoint, so the list guards it too.
 */
export function columnsFor(
  kind: CredentialKind,
  f: KindFields,
  allowedHosts: readonly string[] | null,
  ssrf: Ssrf,
): KindColumns {
  const none = { tokenUrl: null, clientId: null, scope: null, audience: null, authMethod: null };
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
  if (f.token_url == null) throw invalid(`token_url is required for kind ${kind}`);
  if (f.client_id == null) throw invalid(`client_id is required for kind ${kind}`);
  const tokenUrl = validateUpstreamUrl(f.token_url, { ...ssrf, field: "token_url" });
  if (allowedHosts && !hostMatches(hostOf(tokenUrl) ?? "", allowedHosts)) {
    throw invalid("token_url host is not in allowed_hosts");
  }
  return {
    headerName: null,
    tokenUrl,
    clientId: f.client_id,
    scope: f.scope ?? null,
    audience: f.audience ?? null,
    authMethod: f.auth_method ?? "client_secret_basic",
  };
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
  return {
    // api_key's header survives only while it stays api_key.
    header_name:
      "header_name" in input ? input.header_name : kind === current.kind ? current.headerName : null,
    token_url: keep("token_url", current.tokenUrl),
    client_id: keep("client_id", current.clientId),
    scope: keep("scope", current.scope),
    audience: keep("audience", current.audience),
    auth_method: keep("auth_method", current.authMethod),
  };
}
