import { boolean, jsonb, pgTable, primaryKey, text } from "drizzle-orm/pg-core";
import { tstz } from "./columns.ts";

/**
 * The tool catalog of MCP agents (docs/tools.md): one row per (tenant, agent, tool name), learned
 * from the `tools/list` answers the gateway relays or fetches itself. `digest` is the current
 * definition's; `pinned_*` the definition an operator approved. Status is derived, never stored:
 * unpinned (no pin), removed (pinned, absent from the last complete list), pinned (digests equal),
 * drifted (digests differ).
 */
export const mcpTools = pgTable(
  "mcp_tools",
  {
    tenantId: text("tenant_id").notNull(),
    agentId: text("agent_id").notNull(),
    name: text("name").notNull(),
    digest: text("digest").notNull(),
    /** The tool object as the server sent it, `_meta` removed (what the digest covers). */
    definition: jsonb("definition").$type<Record<string, unknown>>().notNull(),
    pinnedDigest: text("pinned_digest"),
    pinnedDefinition: jsonb("pinned_definition").$type<Record<string, unknown>>(),
    pinnedAt: tstz("pinned_at"),
    firstSeenAt: tstz("first_seen_at").notNull().defaultNow(),
    lastSeenAt: tstz("last_seen_at").notNull().defaultNow(),
    /** When the current definition was first seen (the first sighting for a tool never changed). */
    changedAt: tstz("changed_at").notNull().defaultNow(),
    /** In the last complete list (a single-page answer or a whole cursor walk). */
    present: boolean("present").notNull().default(true),
  },
  (t) => [primaryKey({ columns: [t.tenantId, t.agentId, t.name] })],
);

/** Per agent: when its last complete tool list was learned. */
export const mcpToolLists = pgTable(
  "mcp_tool_lists",
  {
    tenantId: text("tenant_id").notNull(),
    agentId: text("agent_id").notNull(),
    refreshedAt: tstz("refreshed_at").notNull().defaultNow(),
  },
  (t) => [primaryKey({ columns: [t.tenantId, t.agentId] })],
);

export type McpToolRow = typeof mcpTools.$inferSelect;
