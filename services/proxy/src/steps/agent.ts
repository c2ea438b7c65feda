import { DomainError, notFound, unprocessable } from "@gw/core";
import type { Call } from "../call.ts";
import type { ProxyDeps } from "../deps.ts";

/**
 * Step 2: the agent in the caller's tenant (404); not callable → 422 (a virtual MCP server has no
 * upstream_url of its own: its members have). GET and DELETE exist only for MCP agents on the
 * streaming path (the standalone SSE stream and session end): 405 otherwise; a virtual server
 * speaks the stateless revision, which has neither, and answers 405 as that revision does.
 */
export async function loadAgent(call: Call, deps: ProxyDeps): Promise<Call> {
  const cached = await deps.agents(call.tenantId, call.agentId);
  if (!cached) throw notFound("agent");
  const { row, target } = cached;
  if (row.status !== "active") throw unprocessable("agent is inactive");
  if (row.suspended) throw unprocessable("agent is suspended");
  const virtual = row.members !== null;
  if (!target && !virtual) throw unprocessable("agent has no upstream_url");
  if (virtual && call.method !== "POST") {
    throw new DomainError("method_not_allowed", "method not allowed; use POST", {
      headers: { Allow: "POST" },
      body: { jsonrpc: "2.0", id: null, error: { code: -32000, message: "Method not allowed." } },
    });
  }
  if (call.method !== "POST" && row.protocol !== "mcp") {
    throw new DomainError("method_not_allowed", "method not allowed; use POST", {
      headers: { Allow: "POST" },
    });
  }
  call.agent = row;
  call.target = target;
  return call;
}
