import { index, integer, jsonb, pgTable, text } from "drizzle-orm/pg-core";
import { tstz } from "./columns.ts";

/**
 * One policy document per tenant; `version` increments on every replace. A deleted document keeps
 * its row with `document` null, so the next replace is numbered above every earlier version.
 */
export const policies = pgTable("policies", {
  tenantId: text("tenant_id").primaryKey(),
  version: integer("version").notNull(),
  /** The validated document as written (default, on_error, rules), see @gw/policy; null: deleted. */
  document: jsonb("document").$type<Record<string, unknown>>(),
  updatedAt: tstz("updated_at").notNull().defaultNow(),
});

export const POLICY_ACTIONS = ["allow", "warn", "deny"] as const;
export type PolicyAction = (typeof POLICY_ACTIONS)[number];

/** One record per evaluated call, denials included. Never holds call content. */
export const policyDecisions = pgTable(
  "policy_decisions",
  {
    id: text("id").primaryKey(),
    tenantId: text("tenant_id").notNull(),
    agentId: text("agent_id").notNull(),
    protocol: text("protocol").notNull(),
    mcpTool: text("mcp_tool"),
    action: text("action", { enum: POLICY_ACTIONS }).notNull(),
    /** 1-based rule position as a string; "" when the default or on_error applied. */
    matchedRule: text("matched_rule").notNull(),
    reason: text("reason").notNull(),
    receiptArtifactId: text("receipt_artifact_id"),
    createdAt: tstz("created_at").notNull().defaultNow(),
  },
  (t) => [
    index("policy_decisions_tenant_created_idx").on(t.tenantId, t.createdAt.desc(), t.id.desc()),
    index("policy_decisions_tenant_agent_created_idx").on(
      t.tenantId,
      t.agentId,
      t.createdAt.desc(),
      t.id.desc(),
    ),
    index("policy_decisions_tenant_action_created_idx").on(
      t.tenantId,
      t.action,
      t.createdAt.desc(),
      t.id.desc(),
    ),
  ],
);

export type PolicyRow = typeof policies.$inferSelect;
export type PolicyDecisionRow = typeof policyDecisions.$inferSelect;
