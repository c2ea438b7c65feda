import { DomainError } from "@gw/core";
import type { Failure } from "@gw/invocations";
import type { Logger } from "@gw/telemetry";
import { ERRORS, type Plan, rpcError, type VirtualServer } from "@gw/virtual";
import type { ForwardCall } from "../call.ts";
import type { ForwardDeps } from "../deps.ts";
import type { Route } from "../target.ts";
import { linkedCall } from "./member-adapt.ts";
import { knownLink, type Link, LinkError, linkOf } from "./member-link.ts";

type Upstream = Extract<Route, { kind: "upstream" }>;

/** A routed call relayed to an older member: the session it was sent on, to open anew after a 404. */
export type SessionRoute = Upstream & { readonly link: Extract<Link, { kind: "session" }> };

/**
 * A routed call of a virtual server in the member's revision (docs/mcp.md, Older revisions). A
 * 2026-07-28 caller and member: the route as it was (nothing looked up but the member's known
 * revision). An older caller and an older member: relayed as it arrives, on the member's session
 * (`link`). Caller and member of different generations: answered by the virtual server, which asks
 * the member and re-shapes its answer (`routed` plan). A member whose handshake fails: a JSON-RPC
 * error naming why, nothing forwarded.
 */
export function routeToMember(
  route: Upstream,
  server: VirtualServer,
  deps: ForwardDeps,
  log: Logger,
): Route | Promise<Route> {
  const { member } = route;
  if (!member) return route;
  const known = knownLink(member, route.call);
  if (known) return decide(route, server, known);
  return linkOf(member, route.call, deps, log).then(
    (link) => decide(route, server, link),
    (e) => {
      if (!(e instanceof LinkError)) throw e;
      return unavailable(route, server, e.reason);
    },
  );
}

function decide(route: Upstream, server: VirtualServer, link: Link): Route {
  const client = route.client ?? null;
  if (link.kind === "stateless" && client === null) return route;
  const { call, member } = route;
  if (link.kind === "session" && client !== null) {
    const relayed: SessionRoute = { ...route, call: linkedCall(call, link, methodOf(call)), link };
    return relayed;
  }
  return {
    kind: "virtual",
    server,
    plan: {
      kind: "routed",
      member: member as NonNullable<typeof member>,
      name: "",
      body: route.body ?? Buffer.alloc(0),
      client,
    } satisfies Plan,
  };
}

/** Handshake failures that are an upstream call's failures: the routed call fails as one would. */
const UPSTREAM_FAILURES = new Set<string>(["timeout", "unreachable", "ssrf_blocked", "credential"]);

/**
 * The caller's answer when the member's revision or session could not be settled: the failure of
 * an upstream call (502/504, as a plain agent at that address), or, for a member that answered
 * but not as an MCP server should, a JSON-RPC error saying so.
 */
function unavailable(route: Upstream, server: VirtualServer, reason: string): Route {
  const routedAgentId = route.routedAgentId ?? "";
  if (UPSTREAM_FAILURES.has(reason)) {
    return {
      kind: "virtual",
      server,
      plan: { kind: "own", answer: rpcError(502, null, ERRORS.internal, "unused") },
      failure: { reason: reason as Failure, routedAgentId },
    };
  }
  return {
    kind: "virtual",
    server,
    routedAgentId,
    plan: {
      kind: "own",
      answer: rpcError(
        502,
        route.call.rpcId,
        ERRORS.internal,
        `Member server unavailable: the MCP handshake with it failed (${reason})`,
      ),
    },
  };
}

function methodOf(call: ForwardCall): string {
  return call.rpcMethod ?? "tools/call";
}

/**
 * A relayed routed call whose older member answered 404 (its session expired): the session opened
 * anew, and the call with it, once. Null: not such a call, or the new session could not be opened.
 */
export async function renewed(
  route: Route,
  status: 404,
  deps: ForwardDeps,
  log: Logger,
): Promise<ForwardCall | null> {
  if (status !== 404 || route.kind !== "upstream" || !("link" in route)) return null;
  const { link, member } = route as SessionRoute;
  if (!member) return null;
  const next = await linkOf(member, route.call, deps, log, link).catch(() => null);
  if (next?.kind !== "session") return null;
  return linkedCall(route.call, next, methodOf(route.call));
}

/** The caller's answer when an older member's session could not be kept (still 404 after a new one). */
export function sessionLost(headers: Record<string, string>, id: string | number | null): DomainError {
  const message = "Member server unavailable: its session expired again after it was opened anew";
  return new DomainError("bad_gateway", message, {
    headers,
    body: { jsonrpc: "2.0", id, error: { code: ERRORS.internal, message } },
  });
}
