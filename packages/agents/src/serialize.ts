import type { AgentRow } from "@gw/db";

/** The agent as callers see it (DESIGN.md §3 Agents). */
export function agentJson(row: AgentRow, opts: { receiptsEnabled: boolean }) {
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
    status: row.status,
    suspended: row.suspended,
    rate_limit: row.rateLimit,
    max_concurrency: row.maxConcurrency,
    capture_bodies: row.captureBodies,
    emit_receipts: row.emitReceipts ?? opts.receiptsEnabled,
    created_by: row.createdBy,
    created_at: row.createdAt.toISOString(),
    updated_at: row.updatedAt.toISOString(),
  };
}
