import { index, integer, jsonb, pgTable, text, uniqueIndex } from "drizzle-orm/pg-core";
import { timestamps } from "./columns.ts";
import { bytea } from "./invocations.ts";

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
    kind: text("kind", { enum: ["bearer", "api_key"] }).notNull(),
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
    ...timestamps,
  },
  (t) => [
    index("credentials_tenant_created_idx").on(t.tenantId, t.createdAt, t.id),
    uniqueIndex("credentials_tenant_name_idx").on(t.tenantId, t.name),
  ],
);

export type CredentialRow = typeof credentials.$inferSelect;
