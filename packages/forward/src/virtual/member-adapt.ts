import { isRecord } from "@gw/jsonrpc";
import { GATEWAY_ENVELOPE, type Json, REVISION, SERVER_INFO_KEY } from "@gw/virtual";
import type { ForwardCall } from "../call.ts";
import type { Link } from "./member-link.ts";

/**
 * Whether a request goes to the member as the caller sent it: a 2026-07-28 client and a
 * 2026-07-28 member (the virtual server's behaviour before older revisions, unchanged).
 */
export function asSent(link: Link, client: string | null): boolean {
  return link.kind === "stateless" && client === null;
}

/** Headers that name the caller's revision and session: replaced by the member's. */
const REVISION_HEADERS = new Set(["mcp-session-id", "mcp-protocol-version", "mcp-method"]);

/**
 * The call with the headers of the member's revision: its session and revision for an older
 * member (the caller's session id, the gateway's, never goes to a member); 2026-07-28's
 * `MCP-Protocol-Version` and `Mcp-Method` for a 2026-07-28 member asked for an older client.
 */
export function linkedCall(
  call: ForwardCall,
  link: Link,
  method: string,
  name: string | null = null,
): ForwardCall {
  const out: string[] = [];
  const raw = call.headers;
  for (let i = 0; i + 1 < raw.length; i += 2) {
    if (!REVISION_HEADERS.has((raw[i] as string).toLowerCase()))
      out.push(raw[i] as string, raw[i + 1] as string);
  }
  if (link.kind === "session") {
    out.push("mcp-protocol-version", link.revision);
    if (link.sessionId !== null) out.push("mcp-session-id", link.sessionId);
  } else {
    out.push("mcp-protocol-version", REVISION, "mcp-method", method);
    if (name !== null) {
      for (let i = out.length - 2; i >= 0; i -= 2)
        if ((out[i] as string).toLowerCase() === "mcp-name") out.splice(i, 2);
      out.push("mcp-name", name);
    }
  }
  return { ...call, headers: out };
}

/** What 2026-07-28's `Mcp-Name` names for a request: the tool or prompt, or the resource read. */
export function mcpNameOf(body: Buffer, method: string): string | null {
  if (method !== "tools/call" && method !== "prompts/get" && method !== "resources/read") return null;
  try {
    const msg: unknown = JSON.parse(body.toString("utf8"));
    const params = isRecord(msg) && isRecord(msg.params) ? msg.params : {};
    const name = method === "resources/read" ? params.uri : params.name;
    return typeof name === "string" ? name : null;
  } catch {
    return null;
  }
}

/**
 * The body in the member's revision: an older member gets no 2026-07-28 envelope; a 2026-07-28
 * member asked for an older client gets the gateway's envelope (the client named no revision per
 * request). Unchanged when nothing is to change.
 */
export function linkedBody(body: Buffer, link: Link, client: string | null): Buffer {
  const toOlder = link.kind === "session" && client === null;
  const toStateless = link.kind === "stateless" && client !== null;
  if (!toOlder && !toStateless) return body;
  let msg: unknown;
  try {
    msg = JSON.parse(body.toString("utf8"));
  } catch {
    return body;
  }
  if (!isRecord(msg)) return body;
  const params = isRecord(msg.params) ? msg.params : {};
  const meta = isRecord(params._meta) ? params._meta : {};
  let nextMeta: Json;
  if (toStateless) nextMeta = { ...GATEWAY_ENVELOPE, ...meta };
  else
    nextMeta = Object.fromEntries(
      Object.entries(meta).filter(([k]) => !k.startsWith("io.modelcontextprotocol/")),
    );
  const nextParams: Json = { ...params, _meta: nextMeta };
  if (Object.keys(nextMeta).length === 0) delete nextParams._meta;
  return Buffer.from(JSON.stringify({ ...msg, params: nextParams }));
}

/** An older member's `server/discover` answer, from what its session's `initialize` said. */
export function discoveredFrom(link: Extract<Link, { kind: "session" }>, id: unknown): Json {
  const { init } = link;
  const result: Json = {
    supportedVersions: [link.revision],
    capabilities: isRecord(init.capabilities) ? init.capabilities : {},
    _meta: { [SERVER_INFO_KEY]: isRecord(init.serverInfo) ? init.serverInfo : {} },
  };
  if (typeof init.instructions === "string") result.instructions = init.instructions;
  return { jsonrpc: "2.0", id: (id ?? null) as Json["id"], result };
}
