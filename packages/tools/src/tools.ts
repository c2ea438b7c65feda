import { type AgentRow, type AgentsCtx, getAgent } from "@gw/agents";
import { invalid, notFound } from "@gw/core";
import { toolsRepo } from "./repo.ts";
import { toolDetailJson, toolJson } from "./serialize.ts";

/**
 * The agent whose catalog is asked for: 404 in another tenant (or none), 400 when it is not an
 * MCP agent (only MCP servers list tools).
 */
export async function mcpAgent({ ctx, agentId }: { ctx: AgentsCtx; agentId: string }): Promise<AgentRow> {
  const agent = await getAgent({ ctx, id: agentId });
  if (agent.protocol !== "mcp")
    throw invalid("agent is not an MCP agent: only MCP agents have a tool catalog");
  return agent;
}

/** GET /v1/agents/{id}/tools: every catalogued tool, ordered by name. */
export async function listTools({ ctx, agentId }: { ctx: AgentsCtx; agentId: string }) {
  await mcpAgent({ ctx, agentId });
  const { rows, refreshedAt } = await toolsRepo.list(ctx.db, ctx.tenantId, agentId);
  return { data: rows.map(toolJson), refreshed_at: refreshedAt?.toISOString() ?? null };
}

/** GET /v1/agents/{id}/tools/{name}: one tool with its current and pinned definitions. */
export async function getTool({ ctx, agentId, name }: { ctx: AgentsCtx; agentId: string; name: string }) {
  await mcpAgent({ ctx, agentId });
  const row = await toolsRepo.get(ctx.db, ctx.tenantId, agentId, name);
  if (!row) throw notFound("tool");
  return toolDetailJson(row);
}

/** Some tools of an agent by name (absent: every one the request may name). */
type ToolNames = { ctx: AgentsCtx; agentId: string; tools?: string[] | undefined };

/**
 * Pins the last seen definition of the named tools (every catalogued tool when `tools` is
 * absent). A name the gateway never saw on this agent → 400 naming its position: there is no
 * definition to pin (refresh the agent's tools first). Nothing is pinned then.
 */
export async function pinTools({ ctx, agentId, tools }: ToolNames) {
  await mcpAgent({ ctx, agentId });
  const names = tools ?? null;
  if (names) {
    const known = new Set(await toolsRepo.known(ctx.db, ctx.tenantId, agentId, names));
    const missing = names.findIndex((n) => !known.has(n));
    if (missing !== -1) {
      throw invalid(
        `tools.${missing}: no tool of that name was ever seen on this agent; refresh its tools first`,
      );
    }
  }
  return { pinned: await toolsRepo.pin(ctx.db, ctx.tenantId, agentId, names) };
}

/** Unpins the named tools (every pinned tool when absent); names not pinned are ignored. */
export async function unpinTools({ ctx, agentId, tools }: ToolNames) {
  await mcpAgent({ ctx, agentId });
  return { unpinned: await toolsRepo.unpin(ctx.db, ctx.tenantId, agentId, tools ?? null) };
}
