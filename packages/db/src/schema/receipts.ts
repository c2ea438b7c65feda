import { index, pgTable, text } from "drizzle-orm/pg-core";
import { tstz } from "./columns.ts";

/** Signed receipt artifacts (compact JWS), one per terminal invocation or policy decision. */
export const receipts = pgTable(
  "receipts",
  {
    id: text("id").primaryKey(),
    tenantId: text("tenant_id").notNull(),
    /** The inv_ or pdec_ id the receipt attests. */
    subjectId: text("subject_id").notNull(),
    action: text("action", { enum: ["gateway.invocation", "gateway.policy_decision"] }).notNull(),
    actor: text("actor").notNull(),
    jws: text("jws").notNull(),
    signedAt: tstz("signed_at").notNull(),
  },
  (t) => [index("receipts_tenant_subject_idx").on(t.tenantId, t.subjectId)],
);

export type ReceiptRow = typeof receipts.$inferSelect;
