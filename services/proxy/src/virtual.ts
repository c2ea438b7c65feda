import type { AgentRow } from "@gw/agents";
import { type VirtualServer, virtualServer } from "@gw/virtual";
import type { ProxyDeps } from "./deps.ts";

/**
 * A virtual MCP server as the forward step serves it (docs/mcp.md, Virtual MCP servers): its
 * members read through the agent cache, so a member written (deactivated, deleted, moved) is seen
 * on the next call like any agent write; a member that cannot be called now is left out.
 */
export async function virtualServerOf(agent: AgentRow, deps: ProxyDeps): Promise<VirtualServer | null> {
  if (agent.members === null) return null;
  return virtualServer(
    { name: agent.name, members: agent.members },
    async (id) => {
      const cached = await deps.agents(agent.tenantId, id);
      return cached ? { ...cached.row, target: cached.target } : undefined;
    },
    deps.config,
  );
}
