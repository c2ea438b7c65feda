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
};

/** A virtual MCP server as step 9 serves it: its name (serverInfo) and its callable members in order. */
export type VirtualServer = {
  readonly name: string;
  readonly version: string;
  /** The host of the gateway's public URL: a browser Origin naming it is allowed (origin.ts). */
  readonly publicHost: string | null;
  readonly members: readonly Member[];
};

/** The fields of a member's agent that decide whether and how it is called. */
export type MemberAgent = {
  readonly status: string;
  readonly suspended: boolean;
  readonly protocol: string;
  readonly members: readonly unknown[] | null;
  readonly credentialRef: string | null;
  readonly target: Target | null;
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
    });
  }
  return out;
}

/**
 * A virtual MCP server as step 9 serves it, for both proxy modes: its members as they are when the
 * call is made (`lookup` reads a member's agent: the agent cache on the streaming path, the store
 * in the worker), its version and public host from the gateway's configuration.
 */
export async function virtualServer(
  server: { readonly name: string; readonly members: readonly MemberSpec[] },
  lookup: (agentId: string) => Promise<MemberAgent | undefined>,
  config: { readonly GW_VERSION: string; readonly publicUrl: string },
): Promise<VirtualServer> {
  return {
    name: server.name,
    version: config.GW_VERSION,
    publicHost: new URL(config.publicUrl).hostname,
    members: await resolveMembers(server.members, lookup),
  };
}
