import { fanOut, PROTOCOL_VERSION_KEY, REVISION } from "@gw/virtual";
import type { AnswerSink, ForwardCall } from "../call.ts";
import type { ForwardDeps } from "../deps.ts";
import type { Route } from "../target.ts";
import { memberPort } from "./member-port.ts";
import type { ListPage } from "./search-port.ts";

type Served = Extract<Route, { kind: "virtual" }>;

/**
 * The members' merged `tools/list`, one page per call, asked on the gateway's behalf in revision
 * 2026-07-28 (each member in its own revision, as for a caller's list): the caller's request was a
 * `tools/call`, so the list goes with its own method header and no name.
 */
export function membersList(
  call: ForwardCall,
  route: Served,
  deps: ForwardDeps,
  log: AnswerSink["caller"]["log"],
): ListPage {
  const headers: string[] = [];
  const raw = call.headers;
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const name = (raw[i] as string).toLowerCase();
    if (
      name === "mcp-name" ||
      name === "mcp-method" ||
      name === "mcp-protocol-version" ||
      name === "mcp-session-id"
    )
      continue;
    headers.push(raw[i] as string, raw[i + 1] as string);
  }
  headers.push("mcp-method", "tools/list", "mcp-protocol-version", REVISION);
  // Pages are asked one after the other under one id: a member's event-stream answer is read up to it.
  const id = "gw-search-list";
  const port = memberPort({ ...call, headers, rpcMethod: "tools/list", rpcId: id }, deps, log, null);
  return async (cursor) => {
    const params: Record<string, unknown> = {
      _meta: {
        [PROTOCOL_VERSION_KEY]: REVISION,
        "io.modelcontextprotocol/clientInfo": { name: "agent-gateway", version: route.server.version },
        "io.modelcontextprotocol/clientCapabilities": {},
      },
    };
    if (cursor !== null) params.cursor = cursor;
    const msg = { jsonrpc: "2.0", id, method: "tools/list", params };
    const out = await fanOut(route.server, "tools/list", msg, port, null);
    if (out.kind !== "answer" || out.answer.status !== 200 || !("result" in out.answer.message)) return null;
    return JSON.stringify(out.answer.message);
  };
}
