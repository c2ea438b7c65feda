-- The protocols' recorded fields (packages/db/src/schema/recorded.ts, ADR 0045): every field a
-- list filter matches has a partial index (tenant, field, created_at) where the field is not null,
-- named after its field, so a filtered page and its total read the matching rows only instead of
-- every row of the tenant (measured at 1M invocations: a `tool` filter took seconds without it).
-- Partial on columns other protocols' rows leave null: an HTTP call writes no entry, an MCP call
-- the method's and (tools/call) the tool's, an A2A call the method's and the task's. The A2A
-- task's index (migration 0019) only takes its field's name. A catalog change and three index
-- builds: no rewrite of existing rows.
ALTER INDEX IF EXISTS "invocations_a2a_task_idx" RENAME TO "invocations_a2a_task_id_idx";
--> statement-breakpoint
CREATE INDEX IF NOT EXISTS "invocations_a2a_task_id_idx" ON "invocations" ("tenant_id", "a2a_task_id", "created_at") WHERE "a2a_task_id" IS NOT NULL;
--> statement-breakpoint
CREATE INDEX IF NOT EXISTS "invocations_mcp_method_idx" ON "invocations" ("tenant_id", "mcp_method", "created_at") WHERE "mcp_method" IS NOT NULL;
--> statement-breakpoint
CREATE INDEX IF NOT EXISTS "invocations_mcp_tool_idx" ON "invocations" ("tenant_id", "mcp_tool", "created_at") WHERE "mcp_tool" IS NOT NULL;
--> statement-breakpoint
CREATE INDEX IF NOT EXISTS "invocations_a2a_method_idx" ON "invocations" ("tenant_id", "a2a_method", "created_at") WHERE "a2a_method" IS NOT NULL;
