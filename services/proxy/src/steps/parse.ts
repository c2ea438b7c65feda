import { CALL_TOOL, type Json, unwrapCallTool } from "@gw/virtual";
import type { Call } from "../call.ts";

/**
 * Step 5: the message a held body forwards (the body, or in verified-action mode the envelope's
 * inner call) is parsed and checked by the agent's protocol (packages/forward/src/protocols): for
 * MCP the JSON-RPC message, its method and the tool of a tools/call, and the agreement of the
 * `Mcp-Method` and `Mcp-Name` headers with it (400 otherwise). An http agent's body is not read.
 * On a search-mode virtual server, a `call_tool` becomes here the `tools/call` of the tool it
 * names (docs/mcp.md, Tool search on virtual servers), so that every later step (policy,
 * approvals, quotas, prices, the invocation, receipts, guardrails) sees that call and no other.
 */
export function parseRequest(call: Call): Call {
  if (call.forward === null) return call;
  const request = call.speaks.parse(call.forward, call.headers, call.agent);
  call.request = request;
  if (request?.tool === CALL_TOOL && call.agent.toolDiscovery === "search" && call.agent.members) {
    unwrap(call);
  }
  return call;
}

/**
 * The `call_tool` body replaced by the `tools/call` of its tool, parsed again with that name as
 * its `Mcp-Name` (the caller's header named `call_tool`, which it checked against). A `call_tool`
 * whose arguments are wrong stays as it is: the virtual server answers it with the revision's
 * invalid-params error.
 */
function unwrap(call: Call): void {
  const msg: unknown = JSON.parse((call.forward as Buffer).toString("utf8"));
  const inner =
    typeof msg === "object" && msg !== null && !Array.isArray(msg) ? unwrapCallTool(msg as Json) : null;
  if (!inner) return;
  const name = (inner.params as { name: string }).name;
  call.forward = Buffer.from(JSON.stringify(inner));
  const headers =
    call.headers["mcp-name"] === undefined ? call.headers : { ...call.headers, "mcp-name": name };
  call.request = call.speaks.parse(call.forward, headers, call.agent);
}
