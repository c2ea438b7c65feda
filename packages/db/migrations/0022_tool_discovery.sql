-- Tool search on virtual MCP servers (docs/mcp.md): how a virtual server shows its tools, `list`
-- (every member tool, as before) or `search` (the gateway's search_tools and call_tool). A constant
-- default: Postgres and PGlite record it in the catalog without rewriting existing rows, which all
-- read `list`.
ALTER TABLE "agents" ADD COLUMN IF NOT EXISTS "tool_discovery" text DEFAULT 'list' NOT NULL;
