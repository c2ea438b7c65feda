import { LIMITS } from "@gw/core";
import { CREDENTIAL_KINDS, type CredentialKind } from "@gw/db";
import { HOP_BY_HOP, normalizeHostPattern } from "@gw/upstream";
import * as v from "valibot";

export const DEFAULT_API_KEY_HEADER = "X-Api-Key";

// Every message here is custom: valibot's defaults echo the received value, and a value here may
// be a secret.
const Secret = v.pipe(
  v.string("must be a string"),
  v.minLength(1, "must not be empty"),
  v.check(
    (s) => Buffer.byteLength(s, "utf8") <= LIMITS.credentialSecretMaxBytes,
    `must be at most ${LIMITS.credentialSecretMaxBytes} bytes`,
  ),
  // It becomes a header value: printable ASCII, and no edge spaces (they would be trimmed in transit).
  v.regex(
    /^[\x21-\x7e](?:[\x20-\x7e]*[\x21-\x7e])?$/,
    "must be printable ASCII without leading or trailing spaces",
  ),
);

const Name = v.pipe(
  v.string("must be a string"),
  v.trim(),
  v.minLength(1, "must not be empty"),
  v.maxLength(200, "must be at most 200 characters"),
);

const Kind = v.picklist(
  CREDENTIAL_KINDS,
  'must be "bearer", "api_key", "oauth2_client_credentials", "oauth2_token_exchange" or "oauth2_authorization_code"',
);

/** The OAuth kinds: the secret is a client secret that buys access tokens (oauth/). */
export const OAUTH_KINDS: ReadonlySet<CredentialKind> = new Set([
  "oauth2_client_credentials",
  "oauth2_token_exchange",
]);

/** Checked for SSRF by the verb (it needs the deployment's policy), like an agent's upstream_url. */
const TokenUrl = v.pipe(
  v.string("must be a string"),
  v.minLength(1, "must not be empty"),
  v.maxLength(2048, "must be at most 2048 characters"),
);

// Sent in a form body or a Basic header: printable ASCII, bounded.
const ClientId = v.pipe(
  v.string("must be a string"),
  v.regex(/^[\x21-\x7e](?:[\x20-\x7e]{0,254}[\x21-\x7e])?$/, "must be 1 to 256 printable ASCII characters"),
);

/** RFC 6749 §3.3: scope tokens separated by single spaces. */
const Scope = v.pipe(
  v.string("must be a string"),
  v.maxLength(1024, "must be at most 1024 characters"),
  v.regex(
    /^[\x21\x23-\x5b\x5d-\x7e]+(?: [\x21\x23-\x5b\x5d-\x7e]+)*$/,
    "must be scope tokens separated by single spaces",
  ),
);

const Audience = v.pipe(
  v.string("must be a string"),
  v.regex(/^[\x21-\x7e](?:[\x20-\x7e]{0,1022}[\x21-\x7e])?$/, "must be 1 to 1024 printable ASCII characters"),
);

export const AUTH_METHODS = ["client_secret_basic", "client_secret_post", "none"] as const;
const AuthMethod = v.picklist(AUTH_METHODS, 'must be "client_secret_basic", "client_secret_post" or "none"');

/** The per-user kind (docs/connections.md): the gateway is an OAuth client holding one grant per person. */
export const PER_USER_KIND = "oauth2_authorization_code" satisfies CredentialKind;

const EndpointUrl = TokenUrl;

/** `scopes`: RFC 6749 scope tokens, at most 50. */
const ScopeList = v.pipe(
  v.array(
    v.pipe(
      v.string("must be a list of scope tokens"),
      v.regex(/^[\x21\x23-\x5b\x5d-\x7e]{1,200}$/, "entries must be scope tokens (no spaces or quotes)"),
    ),
    "must be a list of scope tokens",
  ),
  v.maxLength(50, "must hold at most 50 entries"),
);

/**
 * Headers a credential may not be injected as: hop-by-hop and framing headers the HTTP client owns,
 * headers the proxy passes through untouched by contract (docs/interface.md, Proxy), and the gateway's
 * own. `X-Gateway-*` is refused as a prefix below.
 */
const RESERVED_HEADERS = new Set([
  ...HOP_BY_HOP,
  "content-length",
  "content-type",
  "content-encoding",
  "accept",
  "last-event-id",
  "mcp-session-id",
  "mcp-protocol-version",
  "x-payment",
]);

/** RFC 9110 token, bounded. */
const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]{1,100}$/;

export function isAllowedHeaderName(name: string): boolean {
  const lower = name.toLowerCase();
  return TOKEN.test(name) && !RESERVED_HEADERS.has(lower) && !lower.startsWith("x-gateway-");
}

const HeaderName = v.pipe(
  v.string("must be a string"),
  v.regex(TOKEN, "must be an HTTP header name (token characters, at most 100)"),
  v.check(isAllowedHeaderName, "is a reserved header name"),
);

/** Most entries an `allowed_hosts` list may hold. */
export const ALLOWED_HOSTS_MAX = 50;

/**
 * `allowed_hosts`: host names, IP literals or `*.suffix`, normalized (lower-case, punycode) and
 * de-duplicated. An empty list would allow no host at all, which is never what is meant: 400.
 */
const AllowedHosts = v.pipe(
  v.array(
    v.pipe(
      v.string("must be a list of host names"),
      v.maxLength(253, "entries must be at most 253 characters"),
      v.rawTransform(({ dataset, addIssue, NEVER }) => {
        const host = normalizeHostPattern(dataset.value);
        if (host === undefined) {
          addIssue({ message: 'entries must be host names, IP literals or "*.suffix"' });
          return NEVER;
        }
        return host;
      }),
    ),
    "must be a list of host names",
  ),
  v.minLength(1, "must not be empty (omit it or send null to allow any host)"),
  v.maxLength(ALLOWED_HOSTS_MAX, `must hold at most ${ALLOWED_HOSTS_MAX} entries`),
  v.transform((hosts) => [...new Set(hosts)]),
);

export const CreateCredential = v.strictObject({
  name: Name,
  kind: Kind,
  // Required for every kind but oauth2_authorization_code, whose public clients have none (the verb checks).
  secret: v.optional(Secret),
  header_name: v.nullish(HeaderName),
  allowed_hosts: v.nullish(AllowedHosts),
  ...oauthFields(),
});

/**
 * The OAuth kinds' settings (docs/credentials.md): required `token_url` and `client_id`, optional
 * `scope`, `audience` and `auth_method`. Which kind may carry which is checked by the verb.
 */
function oauthFields() {
  return {
    token_url: v.nullish(TokenUrl),
    client_id: v.nullish(ClientId),
    scope: v.nullish(Scope),
    audience: v.nullish(Audience),
    auth_method: v.nullish(AuthMethod),
    // oauth2_authorization_code only (docs/connections.md).
    authorization_url: v.nullish(EndpointUrl),
    revocation_url: v.nullish(EndpointUrl),
    issuer: v.nullish(EndpointUrl),
    scopes: v.nullish(ScopeList),
    resource: v.nullish(EndpointUrl),
  };
}

/**
 * PUT replaces the secret: `secret` is required and every PUT is a rotation (`version` + 1). `name`,
 * `kind`, `header_name`, `allowed_hosts` and the OAuth settings may change in the same call; absent
 * means unchanged, a null `header_name` goes back to the default, a null `allowed_hosts` allows any
 * host, a null `scope` or `audience` sends none, a null `auth_method` goes back to Basic.
 */
export const PutCredential = v.strictObject({
  secret: v.optional(Secret),
  name: v.optional(Name),
  kind: v.optional(Kind),
  header_name: v.nullish(HeaderName),
  allowed_hosts: v.nullish(AllowedHosts),
  ...oauthFields(),
});

export type CreateCredentialInput = v.InferOutput<typeof CreateCredential>;
export type PutCredentialInput = v.InferOutput<typeof PutCredential>;
