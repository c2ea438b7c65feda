import type { IncomingHttpHeaders } from "node:http";
import { RECORDED } from "@gw/invocations";
import { checkMcpHeaders, isRetryableMcpMethod, type McpMessage, parseMcpRequest } from "@gw/mcp";
import { annotateMcpSpan, traceMcpCall } from "@gw/telemetry";
import { mcpAnswerTexts } from "./mcp-answer.ts";
import { mcpTaskLearner } from "./mcp-task.ts";
import { x402AnswerHook } from "./mcp-x402.ts";
import type { AnswerHook, Protocol } from "./protocol.ts";

/**
 * An MCP agent over Streamable HTTP (docs/mcp.md). A POST's body must be one JSON-RPC 2.0 message
 * (400 otherwise), held on the streaming path too; its method and tool are recorded. MCP 2026-07-28
 * requests repeat the call in `Mcp-Method` and `Mcp-Name` headers, forwarded untouched; one that
 * disagrees with the body, or a 2026-07-28 request without them, is refused with the revision's
 * JSON-RPC error -32020 (`checkMcpHeaders`), because policy and verification judge the body and an
 * upstream that routes on headers must see the same call. `Mcp-Method` is always checked;
 * `Mcp-Name` only where the gateway can place the name. Only the idempotent methods (initialize
 * and the lists) are retried or repeated; a collected event stream is read up to the request's
 * response; the tool catalog learns from and filters `tools/list` answers; answer rules judge the results of
 * tools/call, resources/read and prompts/get (mcp-answer.ts); priced tools show their price and a
 * paid call's result carries its settle receipt (mcp-x402.ts). MCP tasks are recorded: the task a
 * request names or its answer created, and the last status an answer carried (mcp-task.ts). GET (the standalone
 * SSE stream) and DELETE (session end) are forwarded on the streaming path. Once parsed, the
 * request's span becomes the MCP call's span (OpenTelemetry MCP conventions), in the trace of
 * `params._meta.traceparent` when no traceparent header came (docs/operations.md, Telemetry).
 */
export const mcp: Protocol<"mcp"> = {
  name: "mcp",
  streamMethods: new Set(["GET", "DELETE"]),
  holdsBody: true,
  parse(body: Buffer, headers: IncomingHttpHeaders) {
    const message = parseMcpRequest(body);
    checkMcpHeaders(message, {
      protocolVersion: single(headers["mcp-protocol-version"]),
      method: single(headers["mcp-method"]),
      name: single(headers["mcp-name"]),
    });
    traceMcpCall(message, headers);
    return message;
  },
  records: RECORDED.mcp,
  recorded: (facts) => ({
    mcpMethod: facts?.method ?? null,
    mcpTool: facts?.tool ?? null,
    mcpTaskId: (facts as McpMessage | null)?.kind === "request" ? (facts as McpRequest).taskId : null,
  }),
  learn: mcpTaskLearner,
  annotate: annotateMcpSpan,
  retryable: isRetryableMcpMethod,
  repeatable: isRetryableMcpMethod,
  collectUpTo: (requestId) => requestId,
  verified: true,
  checksOrigin: true,
  answerTexts: mcpAnswerTexts,
  // x402 last: the prices and the settle receipt go on what filtering and answer rules left.
  answerHooks: (features) =>
    [features.tools, features.guard, x402AnswerHook].filter((h): h is AnswerHook => h !== undefined),
};

function single(v: string | string[] | undefined): string | null {
  if (v === undefined) return null;
  return Array.isArray(v) ? v.join(", ") : v;
}

type McpRequest = Extract<McpMessage, { kind: "request" }>;
