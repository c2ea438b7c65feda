import { index, pgTable, text } from "drizzle-orm/pg-core";
import { timestamps } from "./columns.ts";

/**
 * A tenant's settlement configuration: the facilitator that settles its agents' x402 payments, and
 * the credential (a row of `credentials`) injected into calls to it. One row per tenant.
 */
export const settlementConfigs = pgTable(
  "settlement_configs",
  {
    tenantId: text("tenant_id").primaryKey(),
    facilitatorUrl: text("facilitator_url").notNull(),
    facilitatorCredentialRef: text("facilitator_credential_ref"),
    ...timestamps,
  },
  (t) => [index("settlement_configs_credential_idx").on(t.tenantId, t.facilitatorCredentialRef)],
);

export type SettlementConfigRow = typeof settlementConfigs.$inferSelect;
