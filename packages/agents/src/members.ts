import { invalid, isId } from "@gw/core";
import type { AgentMember, Db } from "@gw/db";
import { agentRepo } from "./repos/agents.ts";

/**
 * The members of a virtual MCP server, checked as they will be stored (docs/mcp.md, Virtual MCP
 * servers): each names a different MCP agent of the same tenant that is not virtual itself, under
 * a different prefix. A member deactivated or deleted later is not refused here: its tools
 * disappear from the virtual server when it is called.
 */
export async function checkMembers(
  db: Db,
  tenantId: string,
  selfId: string | null,
  members: readonly AgentMember[],
): Promise<void> {
  const ids = new Set<string>();
  const prefixes = new Set<string>();
  for (const [i, m] of members.entries()) {
    const at = `members.${i}`;
    if (ids.has(m.agent_id)) throw invalid(`${at}.agent_id: names an agent that is already a member`);
    if (prefixes.has(m.prefix)) throw invalid(`${at}.prefix: is already the prefix of another member`);
    ids.add(m.agent_id);
    prefixes.add(m.prefix);
    if (m.agent_id === selfId) throw invalid(`${at}.agent_id: a virtual server cannot be its own member`);
    const row = isId("agt", m.agent_id) ? await agentRepo.get(db, tenantId, m.agent_id) : undefined;
    if (!row) throw invalid(`${at}.agent_id: does not name an agent of this tenant`);
    if (row.protocol !== "mcp") throw invalid(`${at}.agent_id: names an agent that is not an MCP agent`);
    if (row.members !== null)
      throw invalid(`${at}.agent_id: names a virtual server; members must not be virtual`);
  }
}
