-- MCP tasks recorded like A2A's (packages/db/src/schema/recorded.ts, docs/mcp.md "Tasks"): the
-- task an MCP call created or named, and the last task status its answer carried. Nullable text
-- columns (a catalog change, no rewrite) and the task's partial index, like every filterable field's.
ALTER TABLE "invocations" ADD COLUMN IF NOT EXISTS "mcp_task_id" text;
--> statement-breakpoint
ALTER TABLE "invocations" ADD COLUMN IF NOT EXISTS "mcp_task_status" text;
--> statement-breakpoint
CREATE INDEX IF NOT EXISTS "invocations_mcp_task_id_idx" ON "invocations" ("tenant_id", "mcp_task_id", "created_at") WHERE "mcp_task_id" IS NOT NULL;
