import { index, pgTable, primaryKey, text } from "drizzle-orm/pg-core";
import { timestamps, tstz } from "./columns.ts";
import { credentials } from "./credentials.ts";
import { bytea } from "./invocations.ts";

/**
 * Whose grant a row seals (tenant, sub, credential) and the sealed bytes under their data key:
 * the columns a grant, a connect in progress and a handoff share.
 */
const sealedForPerson = () => ({
  tenantId: text("tenant_id").notNull(),
  sub: text("sub").notNull(),
  credentialId: text("credential_id")
    .notNull()
    .references(() => credentials.id, { onDelete: "cascade" }),
  ciphertext: bytea("ciphertext").notNull(),
  wrappedKey: bytea("wrapped_key").notNull(),
  kekId: text("kek_id").notNull(),
});

/**
 * One person's grant for one per-user credential (docs/connections.md): the access and refresh
 * tokens, sealed together under a data key bound to tenant, sub and credential. The row is also
 * the lock a refresh holds (`SELECT … FOR UPDATE`), so one replica refreshes at a time.
 */
export const connections = pgTable(
  "connections",
  {
    ...sealedForPerson(),
    /** When the access token expires; null when the provider did not say. */
    expiresAt: tstz("expires_at"),
    /** The scopes the provider granted (space-separated), as it said. */
    scopes: text("scopes"),
    lastUsedAt: tstz("last_used_at"),
    ...timestamps,
  },
  (t) => [
    primaryKey({ columns: [t.tenantId, t.sub, t.credentialId] }),
    index("connections_credential_idx").on(t.credentialId),
  ],
);
export type ConnectionRow = typeof connections.$inferSelect;

/**
 * A connect in progress: keyed by the sha256 of its `state`, bound to tenant, sub and credential,
 * holding the sealed PKCE verifier. Deleted when redeemed (single use) or once expired.
 */
export const connectionStates = pgTable(
  "connection_states",
  {
    stateHash: text("state_hash").primaryKey(),
    ...sealedForPerson(),
    expiresAt: tstz("expires_at").notNull(),
  },
  (t) => [index("connection_states_expires_idx").on(t.expiresAt)],
);
export type ConnectionStateRow = typeof connectionStates.$inferSelect;

/**
 * A connect the provider's redirect completed, waiting for the person's own confirmation: the
 * callback sealed the grant here (as a connection seals it) and handed the browser a one-time
 * code, keyed by its sha256; the signed-in console redeems it with the bearer token of the same
 * sub, which moves the grant to `connections`. Five minutes, single use.
 */
export const connectionHandoffs = pgTable(
  "connection_handoffs",
  {
    codeHash: text("code_hash").primaryKey(),
    ...sealedForPerson(),
    /** When the grant's access token expires; null when the provider did not say. */
    tokenExpiresAt: tstz("token_expires_at"),
    scopes: text("scopes"),
    expiresAt: tstz("expires_at").notNull(),
  },
  (t) => [index("connection_handoffs_expires_idx").on(t.expiresAt)],
);
export type ConnectionHandoffRow = typeof connectionHandoffs.$inferSelect;
