import { invalid, isId, newId, notFound } from "@gw/core";
import type {
  AgentMember,
  AgentPrice,
  AgentProtocol,
  AgentRow,
  AgentToolPrice,
  Db,
  ToolDiscovery,
} from "@gw/db";
import { toolPricesProblem } from "@gw/payments";
import { hostMatches, hostOf, type SsrfPolicy, validateUpstreamUrl } from "@gw/upstream";
import { credentialRepo } from "@gw/vault";
import { checkMembers } from "./members.ts";
import { type AgentPatch, agentRepo } from "./repos/agents.ts";
import type { CreateAgentInput, PatchAgentInput } from "./schema.ts";

export type AgentsCtx = {
  db: Db;
  tenantId: string;
  userId: string;
  ssrf: { policy: SsrfPolicy; allowHttp: boolean };
};

type WireState = {
  protocol: AgentProtocol;
  mcp_transport: string | null;
  mcp_protocol_version: string | null;
  upstream_url: string | null;
  credential_ref: string | null;
  members: AgentMember[] | null;
  tool_discovery: ToolDiscovery;
  card_url: string | null;
  price: AgentPrice | null;
  tool_prices: AgentToolPrice[] | null;
};

/** Cross-field rules on the agent as it will be stored. Returns the normalized columns. */
async function checkState(ctx: AgentsCtx, s: WireState, changed: Set<string>, selfId: string | null) {
  if (s.members !== null) await checkVirtual(ctx, s, changed, selfId);
  else if (s.tool_discovery !== "list") {
    throw invalid('tool_discovery "search" is only valid for a virtual MCP server (members)');
  }
  let transport = s.mcp_transport;
  if (s.protocol === "mcp") {
    // Only one transport exists; an MCP agent that names none gets it.
    transport ??= "streamable_http";
    if (transport === "stdio") throw invalid("mcp_transport stdio is not supported: use streamable_http");
    if (transport !== "streamable_http") throw invalid("mcp_transport must be streamable_http");
  } else {
    if (transport !== null) throw invalid("mcp_transport is only valid for protocol mcp");
    if (s.mcp_protocol_version !== null) throw invalid("mcp_protocol_version is only valid for protocol mcp");
  }
  if (s.card_url !== null && s.protocol !== "a2a") throw invalid("card_url is only valid for protocol a2a");
  if (s.tool_prices !== null) {
    if (s.protocol !== "mcp") throw invalid("tool_prices is only valid for protocol mcp");
    const problem = toolPricesProblem(s.tool_prices, s.price);
    if (problem !== null) throw invalid(problem);
  }
  const cardUrl =
    s.card_url !== null && changed.has("card_url")
      ? validateUpstreamUrl(s.card_url, { ...ctx.ssrf, field: "card_url" })
      : s.card_url;
  let upstream = s.upstream_url;
  if (upstream !== null && changed.has("upstream_url")) {
    upstream = validateUpstreamUrl(upstream, ctx.ssrf);
  }
  if (s.credential_ref !== null && (changed.has("credential_ref") || changed.has("upstream_url"))) {
    const credential = await credentialRepo.get(ctx.db, ctx.tenantId, s.credential_ref);
    if (!credential) throw invalid("credential_ref does not name a credential of this tenant");
    // A credential limited to some hosts cannot be pointed anywhere else (docs/credentials.md, Allowed hosts).
    const host = upstream === null ? undefined : hostOf(upstream);
    if (credential.allowedHosts && host !== undefined && !hostMatches(host, credential.allowedHosts)) {
      throw invalid(
        "upstream_url host is not in the allowed_hosts of the credential named by credential_ref",
      );
    }
  }
  return { mcpTransport: transport, upstreamUrl: upstream, cardUrl };
}

/**
 * A virtual MCP server (members set): an MCP agent with no upstream_url and no credential of its
 * own (each member call uses the member's), whose members are checked when they change.
 */
async function checkVirtual(ctx: AgentsCtx, s: WireState, changed: Set<string>, selfId: string | null) {
  const members = s.members ?? [];
  if (s.protocol !== "mcp") throw invalid("members is only valid for protocol mcp");
  if (s.upstream_url !== null) {
    throw invalid("upstream_url must be null for a virtual server (members): each member has its own");
  }
  if (s.credential_ref !== null) {
    throw invalid("credential_ref must be null for a virtual server (members): each member uses its own");
  }
  if (changed.has("members")) await checkMembers(ctx.db, ctx.tenantId, selfId, members);
}

export async function createAgent({
  ctx,
  input,
}: {
  ctx: AgentsCtx;
  input: CreateAgentInput;
}): Promise<AgentRow> {
  const protocol = input.protocol ?? "http";
  const state: WireState = {
    protocol,
    mcp_transport: input.mcp_transport ?? null,
    mcp_protocol_version: input.mcp_protocol_version ?? null,
    upstream_url: input.upstream_url ?? null,
    credential_ref: input.credential_ref ?? null,
    members: input.members ?? null,
    tool_discovery: input.tool_discovery ?? "list",
    card_url: input.card_url ?? null,
    price: input.price ?? null,
    tool_prices: input.tool_prices ?? null,
  };
  const { mcpTransport, upstreamUrl, cardUrl } = await checkState(
    ctx,
    state,
    new Set(["upstream_url", "credential_ref", "members", "card_url"]),
    null,
  );
  return agentRepo.insert(ctx.db, ctx.tenantId, {
    id: newId("agt"),
    name: input.name,
    description: input.description ?? null,
    upstreamUrl,
    protocol,
    mcpTransport,
    mcpProtocolVersion: state.mcp_protocol_version,
    credentialRef: state.credential_ref,
    price: input.price ?? null,
    toolPrices: state.tool_prices,
    status: input.status ?? "active",
    suspended: input.suspended ?? false,
    rateLimit: input.rate_limit ?? null,
    maxConcurrency: input.max_concurrency ?? null,
    captureBodies: input.capture_bodies ?? false,
    emitReceipts: input.emit_receipts ?? null,
    members: state.members,
    toolDiscovery: state.tool_discovery,
    cardUrl,
    createdBy: ctx.userId,
  });
}

export async function getAgent({ ctx, id }: { ctx: AgentsCtx; id: string }): Promise<AgentRow> {
  const row = isId("agt", id) ? await agentRepo.get(ctx.db, ctx.tenantId, id) : undefined;
  if (!row) throw notFound("agent");
  return row;
}

export async function updateAgent({
  ctx,
  id,
  input,
}: {
  ctx: AgentsCtx;
  id: string;
  input: PatchAgentInput;
}): Promise<AgentRow> {
  const current = await getAgent({ ctx, id });
  const pick = <T>(key: keyof PatchAgentInput, cur: T): T =>
    (key in input ? ((input[key] ?? null) as T) : cur) as T;
  const protocol = input.protocol ?? current.protocol;
  // Switching an MCP agent to http drops its MCP-only fields unless the patch sets them.
  const leavingMcp = protocol === "http" && current.protocol === "mcp";
  const state: WireState = {
    protocol,
    mcp_transport: pick("mcp_transport", leavingMcp ? null : current.mcpTransport),
    mcp_protocol_version: pick("mcp_protocol_version", leavingMcp ? null : current.mcpProtocolVersion),
    upstream_url: pick("upstream_url", current.upstreamUrl),
    credential_ref: pick("credential_ref", current.credentialRef),
    members: pick("members", current.members),
    // An agent that stops being virtual goes back to listing unless the patch says otherwise.
    tool_discovery:
      input.tool_discovery ?? (pick("members", current.members) === null ? "list" : current.toolDiscovery),
    // Leaving A2A drops the card URL unless the patch sets it.
    card_url: pick("card_url", protocol === "a2a" ? current.cardUrl : null),
    price: pick("price", current.price),
    // Leaving MCP drops the per-tool prices unless the patch sets them.
    tool_prices: pick("tool_prices", protocol === "mcp" ? current.toolPrices : null),
  };
  const { mcpTransport, upstreamUrl, cardUrl } = await checkState(
    ctx,
    state,
    new Set(Object.keys(input)),
    id,
  );
  const patch: AgentPatch = {
    protocol,
    mcpTransport,
    mcpProtocolVersion: state.mcp_protocol_version,
    upstreamUrl,
    credentialRef: state.credential_ref,
    members: state.members,
    toolDiscovery: state.tool_discovery,
    cardUrl,
    toolPrices: state.tool_prices,
  };
  if (input.name !== undefined) patch.name = input.name;
  if ("description" in input) patch.description = input.description ?? null;
  if ("price" in input) patch.price = input.price ?? null;
  if (input.status !== undefined) patch.status = input.status;
  if (input.suspended !== undefined) patch.suspended = input.suspended;
  if ("rate_limit" in input) patch.rateLimit = input.rate_limit ?? null;
  if ("max_concurrency" in input) patch.maxConcurrency = input.max_concurrency ?? null;
  if (input.capture_bodies !== undefined) patch.captureBodies = input.capture_bodies;
  if ("emit_receipts" in input) patch.emitReceipts = input.emit_receipts ?? null;
  const row = await agentRepo.update(ctx.db, ctx.tenantId, id, patch);
  if (!row) throw notFound("agent");
  return row;
}

export async function deleteAgent({ ctx, id }: { ctx: AgentsCtx; id: string }): Promise<void> {
  const done = isId("agt", id) && (await agentRepo.softDelete(ctx.db, ctx.tenantId, id));
  if (!done) throw notFound("agent");
}

export async function listAgents({
  ctx,
  query,
}: {
  ctx: AgentsCtx;
  query: { protocol?: AgentProtocol | undefined; limit: number; offset: number };
}) {
  return agentRepo.list(ctx.db, ctx.tenantId, query);
}

export type { AgentRow } from "@gw/db";

/** The agent row for the data plane's cache: undefined for a malformed, unknown or deleted id. */
export async function findAgent(db: Db, tenantId: string, id: string): Promise<AgentRow | undefined> {
  return isId("agt", id) ? agentRepo.get(db, tenantId, id) : undefined;
}
