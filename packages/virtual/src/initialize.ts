import { isRecord } from "@gw/jsonrpc";
import type { FanOut, MemberPort } from "./fanout.ts";
import type { VirtualServer } from "./members.ts";
import { mergeCapabilities } from "./merge.ts";
import { type Json, PROTOCOL_VERSION_KEY, REVISION, requestId } from "./protocol.ts";
import { olderCapabilities } from "./revisions.ts";

/** The envelope of the gateway's own 2026-07-28 requests to members. */
export const GATEWAY_ENVELOPE: Json = {
  [PROTOCOL_VERSION_KEY]: REVISION,
  "io.modelcontextprotocol/clientCapabilities": {},
  "io.modelcontextprotocol/clientInfo": { name: "agent-gateway", version: "1" },
};

/**
 * An older client's `initialize`, answered by the gateway (docs/mcp.md, Older revisions): the
 * revision the client gets, the members' capabilities merged (each member asked as it speaks:
 * `server/discover`, or what its session's `initialize` said), less what an older client cannot
 * use through a virtual server, and the virtual server's own serverInfo. The session id goes in
 * the answer's `Mcp-Session-Id` header (the forward step issues it).
 */
export async function initialize(
  server: VirtualServer,
  msg: Json,
  revision: string,
  port: MemberPort,
): Promise<FanOut> {
  const body = Buffer.from(
    JSON.stringify({ jsonrpc: "2.0", id: 0, method: "server/discover", params: { _meta: GATEWAY_ENVELOPE } }),
  );
  const replies = await Promise.all(server.members.map((m) => port.call(m, body, "server/discover")));
  const caps: unknown[] = [];
  const instructions: string[] = [];
  for (const [i, reply] of replies.entries()) {
    const member = server.members[i];
    const result = reply.kind === "answer" && reply.message ? reply.message.result : undefined;
    if (!isRecord(result)) {
      if (member)
        port.failed(member, "server/discover", reply.kind === "failure" ? reply.reason : "invalid_answer");
      continue;
    }
    caps.push(result.capabilities);
    if (typeof result.instructions === "string" && result.instructions !== "")
      instructions.push(result.instructions);
  }
  const value: Json = {
    protocolVersion: revision,
    capabilities: olderCapabilities(mergeCapabilities(caps)),
    serverInfo: { name: server.name, version: server.version },
  };
  if (instructions.length > 0) value.instructions = instructions.join("\n\n");
  return {
    kind: "answer",
    answer: { status: 200, message: { jsonrpc: "2.0", id: requestId(msg), result: value } },
    servedBy: null,
  };
}
