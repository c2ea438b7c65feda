import { randomUUID } from "node:crypto";
import type { IncomingHttpHeaders } from "node:http";
import { DomainError } from "@gw/core";
import { errorMessage, type JsonRpcId } from "@gw/jsonrpc";
import type { ProtocolName, RequestFacts } from "./protocol.ts";

/** MCP's URLElicitationRequired error (2025-11-25): the call needs the person to visit a URL first. */
export const MCP_URL_ELICITATION_REQUIRED = -32042;
/** The first revision that answers with an `input_required` result instead of that error. */
const INPUT_REQUIRED_REVISION = "2026-07-28";
const MESSAGE = "Connect your account to use this tool: open the link, sign in and approve access.";
/** The `requestState` of a connection-required result: opaque to the client, echoed on its retry. */
export const CONNECT_REQUEST_STATE = "gateway.connection-required";

/**
 * "Connection required" in each protocol's own form (docs/connections.md): the caller has no grant
 * for the agent's per-user credential. MCP requests get a URL-mode elicitation of `url` (the
 * console's connect screen for that credential): clients of 2026-07-28 the `input_required`
 * result with a `requestState` their retry carries back, older clients the -32042 error, both
 * in an HTTP 200 with the request's id as MCP carries them. Everything else (http and a2a
 * agents, MCP messages that are not requests) gets 403 `{"error", "connect_url"}`.
 */
export function connectionRequired(
  protocol: ProtocolName,
  facts: RequestFacts | null,
  headers: IncomingHttpHeaders,
  url: string,
): DomainError {
  if (protocol === "mcp" && facts?.kind === "request" && facts.id !== null) {
    const elicitation = { mode: "url", elicitationId: randomUUID(), url, message: MESSAGE };
    const body = answersInputRequired(facts, headers)
      ? inputRequired(facts.id, elicitation)
      : errorMessage(facts.id, MCP_URL_ELICITATION_REQUIRED, "URL elicitation required", {
          elicitations: [elicitation],
        });
    return new DomainError("forbidden", "connection required", { status: 200, body });
  }
  return new DomainError("forbidden", "connection required", {
    body: { error: "connection required", connect_url: url },
  });
}

function answersInputRequired(facts: RequestFacts, headers: IncomingHttpHeaders): boolean {
  const header = headers["mcp-protocol-version"];
  const revision =
    (facts as { revision?: string | null }).revision ?? (typeof header === "string" ? header : null);
  return revision !== null && revision >= INPUT_REQUIRED_REVISION;
}

function inputRequired(id: JsonRpcId, elicitation: Record<string, string>) {
  return {
    jsonrpc: "2.0",
    id,
    result: {
      resultType: "input_required",
      inputRequests: { connect: { method: "elicitation/create", params: elicitation } },
      requestState: CONNECT_REQUEST_STATE,
    },
  };
}
