import { invalid } from "@gw/core";
import { mcpNameAgrees, parseMcpRequest } from "@gw/mcp";
import type { Call } from "../call.ts";

/**
 * Step 5: the JSON-RPC message an MCP POST forwards (the body, or in verified-action mode the
 * envelope's inner call) is parsed: method, and the tool of a tools/call (400 when it is not one
 * JSON-RPC 2.0 message). MCP 2026-07-28 requests repeat the call in `Mcp-Method` and
 * `Mcp-Name` headers, forwarded untouched; one that disagrees with the body is refused, because
 * policy and verification judge the body and an upstream that routes on headers must see the same
 * call. `Mcp-Method` is always checked; `Mcp-Name` only where the gateway can place the name.
 */
export function parseMcp(call: Call): Call {
  if (call.agent.protocol !== "mcp" || call.forward === null) return call;
  const mcp = parseMcpRequest(call.forward);
  const method = single(call.headers["mcp-method"]);
  const name = single(call.headers["mcp-name"]);
  if ((method !== null && method !== mcp.method) || (name !== null && !mcpNameAgrees(mcp, name))) {
    throw invalid("mcp header does not match body");
  }
  call.mcp = mcp;
  return call;
}

function single(v: string | string[] | undefined): string | null {
  if (v === undefined) return null;
  return Array.isArray(v) ? v.join(", ") : v;
}
