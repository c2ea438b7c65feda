import { DomainError, notFound, unprocessable } from "@gw/core";
import { protocolOf } from "@gw/forward";
import { isOlderSpoken } from "@gw/virtual";
import type { CachedAgent } from "../agent-cache.ts";
import type { Call } from "../call.ts";
import type { ProxyDeps } from "../deps.ts";

/**
 * Step 2: the agent in the caller's tenant (404); not callable → 422 (a virtual MCP server has no
 * upstream_url of its own: its members have), and the protocol it speaks, resolved once. GET and
 * DELETE exist only where the protocol serves them on the streaming path (MCP: the standalone SSE
 * stream and session end): 405 otherwise. A virtual server's GET stream is an older client's, with
 * its session id (its members' streams merged, docs/mcp.md); any other GET is 405, as 2026-07-28
 * answers; a DELETE ends an older client's session (docs/mcp.md, Older revisions), answered in
 * step 9, and is 405 like GET when it names 2026-07-28 (that revision has no session, so a session
 * id it carries changes nothing).
 */
export function loadAgent(call: Call, deps: ProxyDeps): Call | Promise<Call> {
  const cached = deps.agents.now(call.tenantId, call.agentId);
  // A held entry (most calls): no promise.
  return cached instanceof Promise ? cached.then((c) => admitted(call, c)) : admitted(call, cached);
}

function admitted(call: Call, cached: CachedAgent | undefined): Call {
  if (!cached) throw notFound("agent");
  const { row, target } = cached;
  if (row.status !== "active") throw unprocessable("agent is inactive");
  if (row.suspended) throw unprocessable("agent is suspended");
  const virtual = row.members !== null;
  if (!target && !virtual) throw unprocessable("agent has no upstream_url");
  const older = isOlderSpoken(protocolVersionOf(call));
  const noSession = call.method === "DELETE" && !older;
  // An older client's GET with its session opens the merged stream of its members.
  const noStream = call.method === "GET" && !(older && call.headers["mcp-session-id"] !== undefined);
  if (virtual && (noStream || noSession)) {
    throw new DomainError("method_not_allowed", "method not allowed; use POST", {
      headers: { Allow: "POST" },
      body: { jsonrpc: "2.0", id: null, error: { code: -32000, message: "Method not allowed." } },
    });
  }
  const speaks = protocolOf(row.protocol);
  if (call.method !== "POST" && !speaks.streamMethods.has(call.method)) {
    throw new DomainError("method_not_allowed", "method not allowed; use POST", {
      headers: { Allow: "POST" },
    });
  }
  call.agent = row;
  call.speaks = speaks;
  call.target = target;
  return call;
}

function protocolVersionOf(call: Call): string | null {
  const v = call.headers["mcp-protocol-version"];
  return v === undefined ? null : Array.isArray(v) ? v.join(", ") : v;
}
