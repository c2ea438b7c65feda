import { DomainError } from "@gw/core";
import { errorMessage } from "@gw/jsonrpc";
import type { McpMessage } from "./parse.ts";

/** The JSON-RPC error code of a request whose headers disagree with its body (HeaderMismatch). */
export const MCP_HEADER_MISMATCH = -32020;

/** The first revision whose requests mirror their method and name in headers; later ones keep it. */
const FIRST_MIRRORING_REVISION = "2026-07-28";

/** The request headers that mirror the body (MCP 2026-07-28, Streamable HTTP), null when absent. */
export type McpHeaders = {
  readonly protocolVersion: string | null;
  readonly method: string | null;
  readonly name: string | null;
};

/**
 * Checks the headers an MCP request mirrors its body in (docs/mcp.md, Headers and sessions), as
 * the transport of 2026-07-28 requires of a server that reads the body: `Mcp-Method` equals the
 * body's method and `Mcp-Name` the name it carries (`params.name`, `params.uri` or a task's
 * `params.taskId`, after decoding its `=?base64?…?=` form), values compared case-sensitively, on
 * any request that sends them. A request of 2026-07-28 (its `MCP-Protocol-Version` or its envelope
 * names that revision or a later one) must also send `Mcp-Method`, and `Mcp-Name` when the body
 * carries a name. Otherwise a DomainError (400) whose body is the JSON-RPC error -32020 with the
 * request's id: the answer is MCP's, not the gateway's `{"error"}`.
 */
export function checkMcpHeaders(message: McpMessage, headers: McpHeaders): void {
  const problem = headerProblem(message, headers);
  if (problem === null) return;
  const text = `Bad Request: the request headers and body disagree: ${problem}`;
  throw new DomainError("invalid", text, { body: errorMessage(message.id, MCP_HEADER_MISMATCH, text) });
}

function headerProblem(message: McpMessage, headers: McpHeaders): string | null {
  const mirrored =
    message.kind === "request" && (mirrors(headers.protocolVersion) || mirrors(message.revision));
  if (headers.method === null) {
    if (mirrored) return "the required Mcp-Method header is missing";
  } else if (headers.method !== message.method) {
    return "the Mcp-Method header does not match the body's method";
  }
  const field = message.method === null ? undefined : NAME_FIELDS.get(message.method);
  if (field === undefined) return null;
  if (headers.name === null) {
    return mirrored && message.name !== null
      ? `the body has params.${field} but the required Mcp-Name header is missing`
      : null;
  }
  const name = decoded(headers.name);
  if (name === null) return "the Mcp-Name header is not valid in its Base64 form";
  return name === message.name ? null : `the Mcp-Name header does not match the body's params.${field}`;
}

function mirrors(revision: string | null): boolean {
  return revision !== null && revision >= FIRST_MIRRORING_REVISION;
}

/**
 * The methods whose `Mcp-Name` the gateway knows where to find in the body, and where: those of
 * the revision, and the tasks extension's, which name their task. For any other method (a future
 * one) the gateway cannot tell where the name lives, so the header is forwarded unchecked: an
 * unknown method is never refused because of a header the gateway cannot interpret.
 */
const NAME_FIELDS: ReadonlyMap<string, string> = new Map([
  ["tools/call", "name"],
  ["prompts/get", "name"],
  ["resources/read", "uri"],
  ["tasks/get", "taskId"],
  ["tasks/update", "taskId"],
  ["tasks/cancel", "taskId"],
]);

const SENTINEL_PREFIX = "=?base64?";
const SENTINEL_SUFFIX = "?=";
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;
const utf8 = new TextDecoder("utf-8", { fatal: true });

/**
 * A header value as the transport means it: a value that cannot be a plain header value is sent
 * as `=?base64?<Base64 of its UTF-8>?=`. Null: that form, but not canonical Base64 of UTF-8.
 */
function decoded(value: string): string | null {
  const sentinel =
    value.length >= SENTINEL_PREFIX.length + SENTINEL_SUFFIX.length &&
    value.startsWith(SENTINEL_PREFIX) &&
    value.endsWith(SENTINEL_SUFFIX);
  if (!sentinel) return value;
  const b64 = value.slice(SENTINEL_PREFIX.length, value.length - SENTINEL_SUFFIX.length);
  if (!BASE64.test(b64)) return null;
  try {
    return utf8.decode(Buffer.from(b64, "base64"));
  } catch {
    return null;
  }
}
