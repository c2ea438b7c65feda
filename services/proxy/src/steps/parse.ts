import type { Call } from "../call.ts";

/**
 * Step 5: the message a held body forwards (the body, or in verified-action mode the envelope's
 * inner call) is parsed and checked by the agent's protocol (packages/forward/src/protocols): for
 * MCP the JSON-RPC message, its method and the tool of a tools/call, and the agreement of the
 * `Mcp-Method` and `Mcp-Name` headers with it (400 otherwise). An http agent's body is not read.
 */
export function parseRequest(call: Call): Call {
  if (call.forward === null) return call;
  call.request = call.speaks.parse(call.forward, call.headers, call.agent);
  return call;
}
