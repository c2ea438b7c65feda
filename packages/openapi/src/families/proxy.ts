import { bytesText, LIMITS } from "@gw/core";
import { AgentCardResource } from "@gw/forward";
import { ErrorBody } from "@gw/http";
import { Accepted, PollResult } from "@gw/invocations";
import { X402Challenge } from "@gw/payments";
import * as v from "valibot";
import { error, ok, retryAfter } from "../common.ts";
import type { Param, Response, Route } from "../route.ts";

const tags = ["Proxy"];

/** A JSON-RPC error as an MCP agent's header check or a virtual MCP server answers it (docs/mcp.md). */
const JsonRpcErrorBody = v.object({
  jsonrpc: v.literal("2.0"),
  id: v.nullable(v.union([v.string(), v.number()])),
  error: v.object({ code: v.number(), message: v.string(), data: v.optional(v.unknown()) }),
});

const callHeaders: Param[] = [
  {
    name: "X-Gateway-Model",
    in: "header",
    description: `Caller-supplied model identifier recorded on the invocation; at most ${LIMITS.modelHeaderMaxBytes} bytes. An empty value is recorded as null.`,
    schema: v.string(),
  },
  {
    name: "X-PAYMENT",
    in: "header",
    description: "x402 v1 payment: base64 JSON of a signed EIP-3009 authorization meeting the 402's terms.",
    schema: v.string(),
  },
  {
    name: "PAYMENT-SIGNATURE",
    in: "header",
    description: "x402 v2 payment, instead of X-PAYMENT.",
    schema: v.string(),
  },
  {
    name: "Mcp-Method",
    in: "header",
    description:
      "MCP 2026-07-28 request header; must equal the body's method when present, and is required on a 2026-07-28 request (400, JSON-RPC -32020 otherwise).",
    schema: v.string(),
  },
  {
    name: "Mcp-Name",
    in: "header",
    description:
      "MCP 2026-07-28 request header; for tools/call, prompts/get, resources/read and tasks/get, tasks/update, tasks/cancel it must equal the body's params.name (params.uri, params.taskId), after decoding its =?base64?…?= form, and a 2026-07-28 request whose body carries that name must send it (400, JSON-RPC -32020 otherwise); for any other method it is forwarded unchecked.",
    schema: v.string(),
  },
];

/** The A2A version a client reads a card in (the v0.3 shape without it, as A2A servers answer). */
export const a2aVersionHeader: Param = {
  name: "A2A-Version",
  in: "header",
  description: "The A2A protocol version the card is read in (1.0; none: the v0.3 shape).",
  schema: v.string(),
};

const invocationIdHeader = {
  "X-Gateway-Invocation-ID": { description: "The invocation this call created.", schema: { type: "string" } },
};
const warningHeader = {
  "X-Gateway-Policy-Warning": {
    description: "Set when a policy rule with action warn matched.",
    schema: { type: "string" },
  },
};

const anyBody = {
  raw: {
    "application/json": { schema: {} },
    "*/*": { schema: { type: "string", contentMediaType: "application/octet-stream" } },
  },
};

/** A call held by a require_approval rule: the approval to decide (docs/policy.md "Approvals"). */
const ApprovalRequired = v.object({ error: v.literal("approval required"), approval_id: v.string() });

/** Answers every proxy path shares before the call is admitted. */
const admission = (transactional: boolean): Record<string, Response> => ({
  "400": {
    description: `X-Gateway-Model over ${LIMITS.modelHeaderMaxBytes} bytes; a malformed MCP or A2A body (not one JSON-RPC 2.0 request, or a batch); an A2A push notification url the SSRF rules refuse ({"error":"push notification url is not allowed (…)"}, nothing forwarded)${transactional ? "; a malformed verified-action envelope" : ""}. An MCP request whose Mcp-Method/Mcp-Name disagree with the body, or a 2026-07-28 request without them, gets the JSON-RPC error -32020 (header mismatch) with the request id instead, nothing forwarded or recorded.`,
    body: { json: v.union([ErrorBody, JsonRpcErrorBody]) },
  },
  "402": {
    description:
      'Priced agent: with no payment header, the x402 challenge (and the v2 challenge base64 in PAYMENT-REQUIRED); a payment that fails verification or settlement, or a replayed one, gets {"error"}.',
    body: { json: v.union([X402Challenge, ErrorBody]) },
    headers: {
      "PAYMENT-REQUIRED": { description: "x402 v2 challenge, base64 JSON.", schema: { type: "string" } },
    },
  },
  "403": {
    description: `Denied by policy${transactional ? ", or a verified-action MCP tools/call that is missing authorization, fails verification or does not match the verified action" : ""}; or held by a require_approval rule: {"error":"approval required","approval_id"}; or, for an MCP or A2A agent, an Origin header naming neither GW_PUBLIC_URL's origin nor one of GW_ALLOWED_ORIGINS: {"error":"origin not allowed"} (DNS rebinding; nothing charged or recorded).`,
    body: { json: v.union([ApprovalRequired, ErrorBody]) },
  },
  "404": error("No agent with this id in the caller's tenant."),
  "405": {
    ...(transactional
      ? error("Method not allowed on this path.")
      : {
          description:
            "Method not allowed on this path. A virtual MCP server answers GET, and a DELETE whose MCP-Protocol-Version names 2026-07-28 (with or without a session id), with a JSON-RPC error (-32000) instead, as that revision does (a DELETE of an older client ends its session: 204; 404 or 400 with a JSON-RPC error for a session id that is not valid or missing).",
          body: { json: v.union([ErrorBody, JsonRpcErrorBody]) },
        }),
    headers: { Allow: { description: "The methods this path takes.", schema: { type: "string" } } },
  },
  "409": error(
    transactional
      ? "The verified request digest was already used in this tenant."
      : "MCP agent on the streaming endpoint while the verifier is configured.",
  ),
  "422": error("The agent is inactive, suspended or has no upstream_url (and is not a virtual MCP server)."),
  "429": {
    ...error("Rate limit, concurrency limit or a policy quota (quota exceeded) exceeded."),
    headers: {
      "Retry-After": {
        ...retryAfter["Retry-After"],
        description: `${retryAfter["Retry-After"].description} A policy quota's is the seconds until its window ends, up to 86400.`,
        schema: { type: "integer", minimum: 1, maximum: 86_400 },
      },
    },
  },
  "503": error("Store or settlement unavailable."),
});

export const proxyRoutes: Route[] = [
  {
    method: "post",
    path: "/v1/proxy/{id}",
    operationId: "callAgent",
    summary: "Call an agent (transactional)",
    description:
      "The body is forwarded verbatim (an MCP agent takes one JSON-RPC 2.0 request; a virtual MCP server routes it to a member or answers from its members). The invocation is durable before the 202; poll /v1/proxy/{id}/invocations/{inv_id} for the result.",
    tags,
    params: callHeaders,
    body: { ...anyBody, description: `Forwarded verbatim; at most ${LIMITS.transactMaxBodyBytes} bytes.` },
    responses: {
      "202": {
        ...ok("Accepted; the upstream call runs server-side.", Accepted),
        headers: { ...invocationIdHeader, ...warningHeader },
      },
      ...admission(true),
      "413": error(
        `Body over ${bytesText(LIMITS.transactMaxBodyBytes)}, or an embedded authorization bundle over ${bytesText(LIMITS.bundleMaxBytes)}; the message names the limit.`,
      ),
    },
  },
  ...(["post", "get", "delete"] as const).map(
    (method): Route => ({
      method,
      path: "/v1/proxy/{id}/stream",
      operationId: `${method === "post" ? "stream" : method === "get" ? "openStream" : "endStream"}Agent`,
      summary:
        method === "post"
          ? "Call an agent (streaming)"
          : method === "get"
            ? "Open an MCP agent's standalone SSE stream"
            : "End an MCP session",
      description:
        method === "post"
          ? "Both bodies are streamed verbatim without buffering or size cap; SSE passes through. A virtual MCP server (an agent with members) answers as an MCP server of revision 2026-07-28: routed calls stream the member's answer, merged answers are JSON, protocol refusals are JSON-RPC errors with the revision's statuses (404 -32601, 400 -32022). It also serves clients of revisions 2025-11-25, 2025-06-18 and 2025-03-26: their initialize is answered by the gateway with a signed Mcp-Session-Id, and a forged, expired or other agent's session id is answered 404 (docs/mcp.md, Older revisions)."
          : "MCP agents only (405 for http agents); forwarded verbatim like POST.",
      tags,
      params: method === "post" ? callHeaders : [],
      ...(method === "post"
        ? { body: { ...anyBody, description: "Streamed verbatim to the upstream." } }
        : {}),
      responses: {
        "200": {
          description:
            "The upstream's own status, headers and body, streamed verbatim (any status the upstream sends).",
          body: { raw: { "*/*": { schema: {} } } },
          headers: {
            ...invocationIdHeader,
            ...warningHeader,
            "X-PAYMENT-RESPONSE": {
              description: "x402 v1 settlement receipt, base64 JSON {success, transaction, network, payer}.",
              schema: { type: "string" },
            },
          },
        },
        ...admission(false),
        "502": error("Upstream unreachable, refused or failed before answering."),
        "504": error("Upstream timed out before answering."),
      },
    }),
  ),
  {
    method: "get",
    path: "/v1/proxy/{id}/.well-known/agent-card.json",
    operationId: "getProxyAgentCard",
    summary: "An A2A agent's card, pointing at the gateway",
    description:
      "The upstream's agent card rewritten to the gateway's JSON-RPC interface (/v1/proxy/{id}/stream), security the gateway's bearer token (OAuth when authorization servers are configured), upstream signatures dropped and, when receipts are on, signed by the gateway (key in /v1/receipts/jwks). The caller's A2A-Version picks the v1.0 or v0.3 shape. Cached 5 minutes per process; an agent write drops it.",
    tags,
    params: [a2aVersionHeader],
    responses: {
      "200": ok("The card.", AgentCardResource),
      "400": error("The agent is not an A2A agent."),
      "404": error("No agent with this id in the caller's tenant."),
      "422": error("The agent has no upstream_url."),
      "502": error("agent card unavailable: the upstream's card is unreachable, not JSON, or over 1 MiB."),
    },
  },
  {
    method: "get",
    path: "/v1/proxy/{id}/invocations/{inv_id}",
    operationId: "pollInvocation",
    summary: "Poll a transactional call",
    description:
      "Status, and once terminal with an upstream answer, that answer (the body only for the caller that made the call or a holder of invocations:read_body). Results are kept 24 h.",
    tags,
    responses: {
      "200": ok("The invocation and, when there is one, the upstream's answer.", PollResult),
      "404": error("No such invocation of this agent in the caller's tenant."),
    },
  },
];

export const proxyComponents = {
  Accepted,
  AgentCard: AgentCardResource,
  PollResult,
  X402Challenge,
} satisfies Record<string, v.GenericSchema>;
