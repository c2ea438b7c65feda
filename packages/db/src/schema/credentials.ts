import { index, integer, jsonb, pgTable, text, uniqueIndex } from "drizzle-orm/pg-core";
import { timestamps } from "./columns.ts";
import { bytea } from "./invocations.ts";

/**
 * What a credential is: a static secret (`bearer`, `api_key`) or an OAuth client whose secret buys
 * access tokens (`oauth2_client_credentials`, `oauth2_token_exchange`; docs/credentials.md), or an
 * OAuth client that holds one grant per person (`oauth2_authorization_code`; docs/connections.md).
 */
export const CREDENTIAL_KINDS = [
  "bearer",
  "api_key",
  "oauth2_client_credentials",
  "oauth2_token_exchange",
  "oauth2_authorization_code",
] as const;
export type CredentialKind = (typeof CREDENTIAL_KINDS)[number];

/**
 * Upstream credentials, envelope-encrypted: the secret is sealed with a per-record data key, and
 * the data key is wrapped by the deployment's key-encryption key. Tenant and id are bound as
 * associated data so a ciphertext moved to another row does not open.
 */
export const credentials = pgTable(
  "credentials",
  {
    id: text("id").primaryKey(),
    tenantId: text("tenant_id").notNull(),
    name: text("name").notNull(),
    kind: text("kind", { enum: CREDENTIAL_KINDS }).notNull(),
    headerName: text("header_name"),
    hint: text("hint").notNull(),
    version: integer("version").notNull().default(1),
    ciphertext: bytea("ciphertext").notNull(),
    wrappedKey: bytea("wrapped_key").notNull(),
    /** Which key-encryption key wrapped the data key (sha256 prefix of the KEK), for rotation. */
    kekId: text("kek_id").notNull(),
    /**
     * Hosts the secret may be sent to (names, IP literals, `*.suffix`), lower-case; null = any host.
     * Checked when an agent references the credential and again each time it is opened.
     */
    allowedHosts: jsonb("allowed_hosts").$type<string[]>(),
    /** OAuth kinds only (null otherwise): the token endpoint and the client's public settings. */
    tokenUrl: text("token_url"),
    clientId: text("client_id"),
    scope: text("scope"),
    audience: text("audience"),
    authMethod: text("auth_method", { enum: ["client_secret_basic", "client_secret_post", "none"] }),
    /** oauth2_authorization_code only: the provider's endpoints (from `issuer` discovery or given). */
    authorizationUrl: text("authorization_url"),
    revocationUrl: text("revocation_url"),
    issuer: text("issuer"),
    /** RFC 8707 resource indicator sent with the authorization and token requests. */
    resource: text("resource"),
    ...timestamps,
  },
  (t) => [
    index("credentials_tenant_created_idx").on(t.tenantId, t.createdAt, t.id),
    uniqueIndex("credentials_tenant_name_idx").on(t.tenantId, t.name),
  ],
);

export type CredentialRow = typeof credentials.$inferSelect;
