-- Virtual MCP servers (docs/mcp.md): an MCP agent with members and no upstream_url, and the member
-- that served each routed call of one.
ALTER TABLE "agents" ADD COLUMN IF NOT EXISTS "members" jsonb;
--> statement-breakpoint
ALTER TABLE "invocations" ADD COLUMN IF NOT EXISTS "routed_agent_id" text;
