import { AGENT_PROTOCOLS, type AgentRow, TOOL_DISCOVERY_MODES } from "@gw/db";
import * as v from "valibot";
import { Member, Price, RateLimit, ToolPrice } from "./schema.ts";

const Time = v.pipe(v.string(), v.isoTimestamp());

/**
 * The agent as callers see it (docs/interface.md, Agent). The OpenAPI document is generated from this
 * schema and `agentJson` is typed by it, so the two cannot drift apart.
 */
export const AgentResource = v.object({
  id: v.pipe(v.string(), v.regex(/^agt_[0-9a-f-]{36}$/)),
  name: v.string(),
  description: v.nullable(v.string()),
  upstream_url: v.nullable(v.string()),
  protocol: v.picklist(AGENT_PROTOCOLS),
  mcp_transport: v.nullable(v.string()),
  mcp_protocol_version: v.nullable(v.string()),
  credential_ref: v.nullable(v.string()),
  price: v.nullable(Price),
  /** An MCP agent's per-tool prices, first match wins (docs/payments.md, MCP tool calls); null: none. */
  tool_prices: v.nullable(v.array(ToolPrice)),
  status: v.picklist(["active", "inactive"]),
  suspended: v.boolean(),
  rate_limit: v.nullable(RateLimit),
  /** Calls in flight per proxy replica; null → GW_AGENT_MAX_CONCURRENCY. */
  max_concurrency: v.nullable(v.number()),
  capture_bodies: v.boolean(),
  emit_receipts: v.boolean(),
  /** A virtual MCP server's members in order (docs/mcp.md); null for every other agent. */
  members: v.nullable(v.array(Member)),
  /**
   * How a virtual MCP server shows its tools (docs/mcp.md, Tool search on virtual servers): `list`
   * (every member tool) or `search` (`search_tools` and `call_tool`); `list` for every other agent.
   */
  tool_discovery: v.picklist(TOOL_DISCOVERY_MODES),
  /** An A2A agent's card URL when it set one (docs/a2a.md); null: the origin of upstream_url. */
  card_url: v.nullable(v.string()),
  created_by: v.string(),
  created_at: Time,
  updated_at: Time,
});
export type AgentJson = v.InferOutput<typeof AgentResource>;

/** The agent as callers see it (docs/interface.md, Agent). */
export function agentJson(row: AgentRow, opts: { receiptsEnabled: boolean }): AgentJson {
  return {
    id: row.id,
    name: row.name,
    description: row.description,
    upstream_url: row.upstreamUrl,
    protocol: row.protocol,
    mcp_transport: row.mcpTransport,
    mcp_protocol_version: row.mcpProtocolVersion,
    credential_ref: row.credentialRef,
    price: row.price,
    tool_prices: row.toolPrices,
    status: row.status,
    suspended: row.suspended,
    rate_limit: row.rateLimit,
    max_concurrency: row.maxConcurrency,
    capture_bodies: row.captureBodies,
    emit_receipts: row.emitReceipts ?? opts.receiptsEnabled,
    members: row.members,
    tool_discovery: row.toolDiscovery,
    card_url: row.cardUrl,
    created_by: row.createdBy,
    created_at: row.createdAt.toISOString(),
    updated_at: row.updatedAt.toISOString(),
  };
}
