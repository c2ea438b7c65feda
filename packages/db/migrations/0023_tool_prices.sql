-- Per-tool prices of MCP agents (docs/payments.md, MCP tool calls): a list of {tool, amount, asset?,
-- network?, pay_to?, description?}, first match wins. Nullable and new: no rewrite of existing rows.
ALTER TABLE "agents" ADD COLUMN IF NOT EXISTS "tool_prices" jsonb;
