import { sql } from "drizzle-orm";
import { boolean, index, integer, jsonb, pgTable, text } from "drizzle-orm/pg-core";
import { timestamps, tstz } from "./columns.ts";

export type AgentPrice = {
  amount: string;
  asset: "USDC";
  network: "base" | "base-sepolia";
  pay_to: string;
  tools?: Record<string, string> | undefined;
};
/**
 * One per-tool price of an MCP agent (docs/payments.md, MCP tool calls): `tool` is an exposed name
 * or a prefix followed by `*`; omitted fields come from the agent's own `price`. `network` is the v1
 * name or the CAIP-2 id, `asset` "USDC" or that network's USDC contract, as written.
 */
export type AgentToolPrice = {
  tool: string;
  amount: string;
  asset?: string | undefined;
  network?: "base" | "base-sepolia" | "eip155:8453" | "eip155:84532" | undefined;
  pay_to?: string | undefined;
  description?: string | undefined;
};
/** The protocols an agent may speak (docs/architecture.md, Adding a protocol). */
export const AGENT_PROTOCOLS = ["http", "mcp", "a2a"] as const;
export type AgentProtocol = (typeof AGENT_PROTOCOLS)[number];
export type AgentRateLimit = { rps: number; burst: number };
/** How a virtual MCP server shows its tools (docs/mcp.md, Tool search on virtual servers). */
export const TOOL_DISCOVERY_MODES = ["list", "search"] as const;
export type ToolDiscovery = (typeof TOOL_DISCOVERY_MODES)[number];
/**
 * One member of a virtual MCP server (docs/mcp.md, Virtual MCP servers): the member agent, the
 * prefix its names are exposed under ("" for none), and the tool-name patterns kept or dropped.
 */
export type AgentMember = {
  agent_id: string;
  prefix: string;
  include?: string[] | undefined;
  exclude?: string[] | undefined;
};

export const agents = pgTable(
  "agents",
  {
    id: text("id").primaryKey(),
    tenantId: text("tenant_id").notNull(),
    name: text("name").notNull(),
    description: text("description"),
    upstreamUrl: text("upstream_url"),
    protocol: text("protocol", { enum: AGENT_PROTOCOLS }).notNull().default("http"),
    mcpTransport: text("mcp_transport"),
    mcpProtocolVersion: text("mcp_protocol_version"),
    credentialRef: text("credential_ref"),
    price: jsonb("price").$type<AgentPrice>(),
    /** An MCP agent's per-tool prices, first match wins; null: no tool is priced. */
    toolPrices: jsonb("tool_prices").$type<AgentToolPrice[]>(),
    status: text("status", { enum: ["active", "inactive"] })
      .notNull()
      .default("active"),
    suspended: boolean("suspended").notNull().default(false),
    rateLimit: jsonb("rate_limit").$type<AgentRateLimit>(),
    /** Calls in flight per proxy replica; null → GW_AGENT_MAX_CONCURRENCY. */
    maxConcurrency: integer("max_concurrency"),
    captureBodies: boolean("capture_bodies").notNull().default(false),
    /** null → follow the deployment (true when an emitter is attached). */
    emitReceipts: boolean("emit_receipts"),
    /** A virtual MCP server's members, in order; null for every other agent. */
    members: jsonb("members").$type<AgentMember[]>(),
    /** An A2A agent's card, when not at the origin of upstream_url (docs/a2a.md); null otherwise. */
    cardUrl: text("card_url"),
    /**
     * A virtual MCP server's tools/list: every member tool (`list`), or the gateway's two tools
     * `search_tools` and `call_tool` (`search`). Always `list` for any other agent.
     */
    toolDiscovery: text("tool_discovery", { enum: TOOL_DISCOVERY_MODES }).notNull().default("list"),
    createdBy: text("created_by").notNull(),
    ...timestamps,
    /** Soft delete: the row stays so invocation history keeps its agent. */
    deletedAt: tstz("deleted_at"),
  },
  (t) => [
    index("agents_tenant_created_idx").on(t.tenantId, t.createdAt, t.id).where(sql`${t.deletedAt} is null`),
    index("agents_tenant_credential_idx").on(t.tenantId, t.credentialRef),
  ],
);

export type AgentRow = typeof agents.$inferSelect;
