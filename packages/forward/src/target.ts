import type { Failure } from "@gw/invocations";
import type { Target } from "@gw/upstream";
import { endSession, type Member, openStream, type Plan, planRequest, type VirtualServer } from "@gw/virtual";
import type { BodySource, ForwardCall } from "./call.ts";
import { memberIdsOf, type SessionKeyConfig, sessionsOf } from "./virtual/session-key.ts";

/**
 * Where a call goes. `upstream`: dialled at `target` (the agent's own upstream, or the member of a
 * virtual server that serves a routed call, with the member's own name in `body`); `virtual`: a
 * virtual server answers it from its members (`virtual.ts`).
 */
export type Route =
  | {
      readonly kind: "upstream";
      readonly call: ForwardCall;
      readonly target: Target;
      /** The body to send when it is not the caller's (a routed call's); null: the tap's. */
      readonly body: Buffer | null;
      /** The member that serves a routed call of a virtual server. */
      readonly routedAgentId: string | null;
      /** That member, and the older client's revision when the caller is one (`routed.ts`). */
      readonly member?: Member;
      readonly client?: string | null;
    }
  | {
      readonly kind: "virtual";
      readonly server: VirtualServer;
      /** `routed`: a routed call whose member and caller speak different revisions (`routed.ts`). */
      readonly plan: Plan;
      /** A routed call whose member could not be spoken to (its handshake failed): fails like an upstream call. */
      readonly failure?: { readonly reason: Failure; readonly routedAgentId: string };
      /** The member a routed call was meant for, when the virtual server answers it instead. */
      readonly routedAgentId?: string;
    };

/**
 * The one place a call's upstream is chosen, before the credential is opened for that host and the
 * call is dialled: the agent's own upstream, or for a virtual MCP server the member a routed call
 * names (by the prefix of the exposed name), called with the member's own name, credential and
 * upstream. Cheap and calls nothing.
 */
export function chooseTarget(call: ForwardCall, source: BodySource, config: SessionKeyConfig): Route {
  const { server } = call;
  if (!server)
    return { kind: "upstream", call, target: call.target as Target, body: null, routedAgentId: null };
  const session = {
    tenantId: call.tenantId,
    agentId: call.agentId,
    sessions: sessionsOf(config),
    members: memberIdsOf(config),
  };
  const sessionId = header(call.headers, "mcp-session-id");
  if (call.method === "DELETE") return { kind: "virtual", server, plan: endSession(sessionId, session) };
  // An older client's GET: its members' streams merged (docs/mcp.md, Server-initiated messages).
  if (call.method === "GET") return { kind: "virtual", server, plan: openStream(sessionId, session) };
  const plan = planRequest(server, Buffer.isBuffer(source) ? source : EMPTY, {
    protocolVersion: header(call.headers, "mcp-protocol-version"),
    sessionId,
    session,
  });
  if (plan.kind !== "routed") return { kind: "virtual", server, plan };
  // An older client's session names the capabilities relayed to it: the member session pool.
  const relays = plan.client !== null && sessionId ? session.sessions.verify(sessionId)?.relays : undefined;
  return {
    kind: "upstream",
    call: memberCall(relays ? { ...call, relays } : call, plan.member, plan.name),
    target: plan.member.target,
    body: plan.body,
    routedAgentId: plan.member.agentId,
    member: plan.member,
    client: plan.client,
  };
}

/**
 * The call as a member receives it: the member's upstream and credential, its agent id in
 * `X-Gateway-Agent-ID`, and (for a routed call) its own name in `Mcp-Name`.
 */
export function memberCall(
  call: ForwardCall,
  member: Member,
  name: string | null,
  rpcMethod?: string,
): ForwardCall {
  return {
    ...call,
    agentId: member.agentId,
    target: member.target,
    server: null,
    credentialRef: member.credentialRef,
    ...(rpcMethod === undefined ? {} : { rpcMethod }),
    headers: name === null ? call.headers : withHeader(call.headers, "mcp-name", name),
  };
}

const EMPTY = Buffer.alloc(0);

/** A header of a raw [name, value, ...] list (first value), or null. */
function header(raw: readonly string[], name: string): string | null {
  for (let i = 0; i + 1 < raw.length; i += 2)
    if ((raw[i] as string).toLowerCase() === name) return raw[i + 1] as string;
  return null;
}

/** The raw list with `name` set to `value` (replaced when present). */
function withHeader(raw: readonly string[], name: string, value: string): string[] {
  const out: string[] = [];
  for (let i = 0; i + 1 < raw.length; i += 2) {
    if ((raw[i] as string).toLowerCase() !== name) out.push(raw[i] as string, raw[i + 1] as string);
  }
  out.push(name, value);
  return out;
}
