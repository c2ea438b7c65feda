import { invalid } from "@gw/core";

// seam: mcp — the envelope parse both proxy modes use for protocol=mcp agents.
/** Method and tool of a JSON-RPC 2.0 request body; 400 when it is not one. */
export function mcpEnvelope(body: Buffer): { method: string; tool: string | null } {
  let msg: unknown;
  try {
    msg = JSON.parse(body.toString("utf8"));
  } catch {
    throw invalid("MCP request body must be a JSON-RPC 2.0 request");
  }
  if (typeof msg !== "object" || msg === null || Array.isArray(msg)) {
    throw invalid("MCP request body must be a single JSON-RPC 2.0 request");
  }
  const m = msg as { jsonrpc?: unknown; method?: unknown; params?: { name?: unknown } };
  if (m.jsonrpc !== "2.0" || typeof m.method !== "string") {
    throw invalid("MCP request body must be a single JSON-RPC 2.0 request");
  }
  const tool = m.method === "tools/call" && typeof m.params?.name === "string" ? m.params.name : null;
  return { method: m.method, tool };
}
