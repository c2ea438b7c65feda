import { bytesText, DomainError, invalid, LIMITS, tooLarge } from "@gw/core";
import { isRecord } from "@gw/jsonrpc";
import { type McpMessage, parseMcpRequest } from "@gw/mcp";
import { parseStrictJson, StrictJsonError } from "./json/strict-parse.ts";
import { BUNDLE_SCHEMA, ENVELOPE_SCHEMA } from "./schemas.ts";

/** A verified-action envelope, checked: what to forward, what to compare, what the verifier reads. */
export type Envelope = {
  kind: "envelope";
  /** The exact bytes of the `call` value: the only thing forwarded upstream. */
  call: Buffer;
  message: McpMessage;
  tool: string;
  /** `params.arguments` of the inner call; `{}` when absent (MCP: a tool called without arguments). */
  arguments: Record<string, unknown>;
  /** The exact bytes of the `authorization` value as they appear in the request. */
  authorization: Buffer;
};

/** A plain JSON-RPC message (no envelope); a bare `tools/call` among them is refused by the caller. */
export type Bare = { kind: "jsonrpc"; message: McpMessage };

const ENVELOPE_KEYS = ["authorization", "call", "schema"];

/**
 * Reads an MCP body in verified-action mode. Every body is parsed strictly (a duplicate key at any
 * depth is 400: otherwise the gateway and the upstream could read different calls from one body).
 * A JSON-RPC message (it has `jsonrpc` or `method`) comes back as `jsonrpc`; any other object must
 * be exactly `{schema, call, authorization}` with the right format ids (400), an authorization of
 * at most `LIMITS.bundleMaxBytes` (413) and a single JSON-RPC 2.0 tools/call request as `call` (400).
 */
export function readVerifiedActionBody(body: Uint8Array): Envelope | Bare {
  const { value, members } = strict(body);
  if (members === null || "jsonrpc" in (value as object) || "method" in (value as object)) {
    return { kind: "jsonrpc", message: parseMcpRequest(body) };
  }
  const keys = [...members.keys()].sort();
  if (keys.length !== ENVELOPE_KEYS.length || keys.some((k, i) => k !== ENVELOPE_KEYS[i])) {
    throw invalid("a verified-action envelope has exactly the members schema, call and authorization");
  }
  const env = value as { schema: unknown; call: unknown; authorization: unknown };
  const authSpan = members.get("authorization");
  const callSpan = members.get("call");
  if (authSpan === undefined || callSpan === undefined)
    throw new DomainError("invalid", "malformed envelope");
  if (authSpan.end - authSpan.start > LIMITS.bundleMaxBytes) {
    throw tooLarge(`the authorization bundle is larger than ${bytesText(LIMITS.bundleMaxBytes)}`);
  }
  if (env.schema !== ENVELOPE_SCHEMA) throw invalid(`envelope schema must be "${ENVELOPE_SCHEMA}"`);
  if (!isRecord(env.authorization) || env.authorization.schema !== BUNDLE_SCHEMA) {
    throw invalid(`authorization must be an object with schema "${BUNDLE_SCHEMA}"`);
  }
  const call = Buffer.from(body.subarray(callSpan.start, callSpan.end));
  const message = isRecord(env.call) ? parseMcpRequest(call) : null;
  if (message?.kind !== "request" || message.method !== "tools/call" || message.tool === null) {
    throw invalid("call must be a single JSON-RPC 2.0 tools/call request");
  }
  const params = (env.call as { params: Record<string, unknown> }).params;
  const args = params.arguments ?? {};
  if (!isRecord(args)) throw invalid("params.arguments of the call must be an object");
  return {
    kind: "envelope",
    call,
    message,
    tool: message.tool,
    arguments: args,
    authorization: Buffer.from(body.subarray(authSpan.start, authSpan.end)),
  };
}

function strict(body: Uint8Array) {
  try {
    return parseStrictJson(body);
  } catch (e) {
    if (e instanceof StrictJsonError) throw invalid(e.message);
    throw e;
  }
}
