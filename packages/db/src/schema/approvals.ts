import { sql } from "drizzle-orm";
import { index, pgTable, text, uniqueIndex } from "drizzle-orm/pg-core";
import { tstz } from "./columns.ts";

export const APPROVAL_STATUSES = ["pending", "approved", "denied", "expired", "used"] as const;
export type ApprovalStatus = (typeof APPROVAL_STATUSES)[number];

/**
 * A person's decision on one call a `require_approval` rule held (docs/policy.md "Approvals"),
 * bound to the tenant, agent, caller, MCP method and tool, and the call's digest. Pending and
 * approved rows past `expires_at` read as expired; an approved row is used at most once (one
 * conditional UPDATE).
 */
export const approvals = pgTable(
  "approvals",
  {
    id: text("id").primaryKey(),
    tenantId: text("tenant_id").notNull(),
    agentId: text("agent_id").notNull(),
    sub: text("sub").notNull(),
    /** "" for a non-MCP call (a binding column: NULLs would never be equal in the unique index). */
    mcpMethod: text("mcp_method").notNull(),
    mcpTool: text("mcp_tool").notNull(),
    /** `sha256:<hex>` of the canonical JSON of the tool arguments, or of the raw body. */
    callDigest: text("call_digest").notNull(),
    /** The canonical JSON of the arguments as the caller sent them (≤ 64 KiB), for the approver. */
    arguments: text("arguments"),
    status: text("status", { enum: APPROVAL_STATUSES }).notNull(),
    reason: text("reason"),
    requestedAt: tstz("requested_at").notNull().defaultNow(),
    decidedAt: tstz("decided_at"),
    decidedBy: text("decided_by"),
    expiresAt: tstz("expires_at").notNull(),
    usedAt: tstz("used_at"),
  },
  (t) => [
    uniqueIndex("approvals_pending_binding_idx")
      .on(t.tenantId, t.agentId, t.sub, t.mcpMethod, t.mcpTool, t.callDigest)
      .where(sql`status = 'pending'`),
    index("approvals_approved_binding_idx")
      .on(t.tenantId, t.agentId, t.sub, t.mcpMethod, t.mcpTool, t.callDigest)
      .where(sql`status = 'approved'`),
    index("approvals_tenant_requested_idx").on(t.tenantId, t.requestedAt.desc(), t.id.desc()),
  ],
);

export type ApprovalRow = typeof approvals.$inferSelect;
