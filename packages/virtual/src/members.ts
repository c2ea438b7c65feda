import type { Target } from "@gw/upstream";

/** A member as the agent stores it (docs/mcp.md, Virtual MCP servers). */
export type MemberSpec = {
  agent_id: string;
  prefix: string;
  include?: string[] | undefined;
  exclude?: string[] | undefined;
};

/** A member that can be called now: its agent is active, an MCP agent and not virtual itself. */
export type Member = {
  readonly agentId: string;
  readonly prefix: string;
  readonly include: readonly string[] | null;
  readonly exclude: readonly string[] | null;
  readonly target: Target;
  readonly credentialRef: string | null;
  /** The member's `mcp_protocol_version` when set: the revision it is spoken to in; null: probed. */
  readonly revision?: string | null;
  /** When the member's agent was last written (ms): what was learnt of it before is forgotten. */
  readonly writtenAt?: number;
};

/** A virtual MCP server as step 9 serves it: its name (serverInfo) and its callable members in order. */
export type VirtualServer = {
  readonly name: string;
  readonly version: string;
  readonly members: readonly Member[];
  /**
   * How its tools/list answers (docs/mcp.md, Tool search on virtual servers): every member tool,
   * or the gateway's `search_tools` and `call_tool`. Absent: `list`.
   */
  readonly discovery?: "list" | "search";
};

/** The fields of a member's agent that decide whether and how it is called. */
export type MemberAgent = {
  readonly status: string;
  readonly suspended: boolean;
  readonly protocol: string;
  readonly members: readonly unknown[] | null;
  readonly credentialRef: string | null;
  readonly target: Target | null;
  readonly mcpProtocolVersion?: string | null;
  readonly updatedAt?: Date;
};

/** An active, unsuspended MCP agent that is not virtual itself. */
function callable(agent: MemberAgent): boolean {
  return agent.status === "active" && !agent.suspended && agent.protocol === "mcp" && agent.members === null;
}

/**
 * The members that can be called now, in order. A member whose agent was deleted, deactivated,
 * suspended, or has since become something a member cannot be (not MCP, virtual, no upstream) is
 * left out: its tools disappear from the virtual server, and nothing is refused.
 */
async function resolveMembers(
  specs: readonly MemberSpec[],
  lookup: (agentId: string) => Promise<MemberAgent | undefined>,
): Promise<Member[]> {
  const agents = await Promise.all(specs.map((s) => lookup(s.agent_id)));
  const out: Member[] = [];
  for (const [i, spec] of specs.entries()) {
    const agent = agents[i];
    if (!agent || !callable(agent) || agent.target === null) continue;
    out.push({
      agentId: spec.agent_id,
      prefix: spec.prefix,
      include: spec.include ?? null,
      exclude: spec.exclude ?? null,
      target: agent.target,
      credentialRef: agent.credentialRef,
      revision: agent.mcpProtocolVersion ?? null,
      writtenAt: agent.updatedAt?.getTime() ?? 0,
    });
  }
  return out;
}

/**
 * A virtual MCP server as step 9 serves it, for both proxy modes: its members as they are when the
 * call is made (`lookup` reads a member's agent: the agent cache on the streaming path, the store
 * in the worker), its version from the gateway's configuration. (A browser `Origin` was checked
 * before the call was admitted: the proxy's Origin check, docs/security.md.)
 */
export async function virtualServer(
  server: {
    readonly name: string;
    readonly members: readonly MemberSpec[];
    readonly discovery?: "list" | "search";
  },
  lookup: (agentId: string) => Promise<MemberAgent | undefined>,
  config: { readonly GW_VERSION: string },
): Promise<VirtualServer> {
  return {
    name: server.name,
    version: config.GW_VERSION,
    members: await resolveMembers(server.members, lookup),
    discovery: server.discovery ?? "list",
  };
}
