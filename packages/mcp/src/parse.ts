import { invalid, LIMITS } from "@gw/core";
import { isRecord, type JsonObject, type JsonRpcId, readMessage } from "@gw/jsonrpc";

/** Recorded method and tool names are capped like the model header: they land in invocation rows. */
export const MCP_NAME_MAX_BYTES = LIMITS.nameMaxBytes;
/**
 * A recorded MCP task id is at most this long: longer than a name, because a virtual server's task
 * ids (signed, naming the member, its session and the member's id) run to a few hundred bytes.
 */
export const MCP_TASK_ID_MAX_BYTES = 1024;

export type { JsonRpcId } from "@gw/jsonrpc";

/**
 * One JSON-RPC 2.0 message posted to an MCP server over Streamable HTTP, as far as the gateway
 * cares: what to record (`method`, `tool`) and what to match (`id`). Nothing else is kept.
 *
 * - `request`: has a method and an id; the server answers it (JSON or an SSE stream).
 * - `notification`: has a method and no id; the server answers 202 with no body.
 * - `response`: a client's answer to a server-initiated request (sampling, elicitation,
 *   roots/list). It has no method, so `method` and `tool` are null; the server answers 202.
 */
export type McpMessage =
  | McpRequestMessage
  | { kind: "notification"; method: string; tool: null; name: null; id: null; isNotification: true }
  | { kind: "response"; method: null; tool: null; name: null; id: JsonRpcId | null; isNotification: false };

type McpRequestMessage = {
  kind: "request";
  method: string;
  tool: string | null;
  /**
   * What an `Mcp-Name` header must equal (MCP 2026-07-28): `params.name` of tools/call and
   * prompts/get, `params.uri` of resources/read, `params.taskId` of tasks/get, tasks/update and
   * tasks/cancel; null for other methods or when the body has none (see `checkMcpHeaders`).
   */
  name: string | null;
  /**
   * The revision the request's envelope names (`params._meta["io.modelcontextprotocol/protocolVersion"]`,
   * 2026-07-28 and later), null without one.
   */
  revision: string | null;
  id: JsonRpcId;
  isNotification: false;
  /**
   * The MCP task the request names (`params.taskId` of `tasks/get`, `tasks/result`, `tasks/update`
   * and `tasks/cancel`; docs/mcp.md, Tasks) when the record can hold it (a string of at most
   * MCP_TASK_ID_MAX_BYTES, storable), else null. Recorded only: the upstream judges the id.
   */
  taskId: string | null;
  /** A task-augmented `tools/call` (`params.task` is an object): its answer creates a task. */
  taskAugmented: boolean;
  /**
   * `params.arguments` of a tools/call as parsed (any JSON value, undefined when absent), for
   * policy conditions; never recorded.
   */
  arguments?: unknown;
  /**
   * `params._meta.traceparent` and `tracestate` when they are strings, as sent (unvalidated: the
   * tracing side checks the W3C format and ignores a bad value). Never forwarded differently: the
   * body stays verbatim.
   */
  traceContext?: { traceparent: string; tracestate?: string };
  /**
   * `params._meta["x402/payment"]` of a tools/call as parsed (docs/payments.md, MCP tool calls),
   * read only by the payment step of an agent that prices tools.
   */
  payment?: unknown;
};

/** The x402 MCP transport's payment key in `params._meta`. */
const X402_PAYMENT = "x402/payment";

const decoder = new TextDecoder("utf-8", { fatal: true });

/**
 * Parses the body of a call to an MCP agent. It must be exactly one JSON-RPC 2.0 message object:
 * batches (removed from MCP in 2025-06-18), non-JSON, invalid UTF-8 and wrong member types are
 * refused with `invalid` (400) and a caller-safe message that never echoes the body. A
 * `tools/call` must name its tool in `params.name`. The bytes are not rewritten: the caller
 * forwards the body it read, verbatim.
 */
export function parseMcpRequest(body: Uint8Array): McpMessage {
  let value: unknown;
  try {
    value = JSON.parse(decoder.decode(body));
  } catch {
    throw invalid("MCP request body must be a JSON-RPC 2.0 message in valid JSON");
  }
  if (Array.isArray(value)) {
    throw invalid("JSON-RPC batches are not supported: send one JSON-RPC 2.0 message per request");
  }
  if (!isRecord(value)) throw invalid("MCP request body must be a JSON-RPC 2.0 message object");
  const msg = readMessage(value);
  switch (msg.kind) {
    case "invalid":
      throw invalid(msg.problem.startsWith("must ") ? `MCP request body ${msg.problem}` : msg.problem);
    case "response":
      return { kind: "response", method: null, tool: null, name: null, id: msg.id, isNotification: false };
    case "notification":
      named(msg.method);
      if (msg.method === "tools/call") {
        toolOf(msg.params);
        throw invalid("tools/call must be a request with an id, not a notification");
      }
      return {
        kind: "notification",
        method: msg.method,
        tool: null,
        name: null,
        id: null,
        isNotification: true,
      };
    case "request":
      return requestOf(msg.method, msg.id, msg.params);
  }
}

/** A method name the record can hold: storable, at most MCP_NAME_MAX_BYTES. */
function named(method: string): void {
  storable("method", method);
  if (byteLength(method) > MCP_NAME_MAX_BYTES) {
    throw invalid(`method must be at most ${MCP_NAME_MAX_BYTES} bytes`);
  }
}

function requestOf(method: string, id: JsonRpcId, params: JsonObject | unknown[] | undefined): McpMessage {
  named(method);
  const tool = method === "tools/call" ? toolOf(params) : null;
  // Stored with a transactional call's job (jsonb).
  if (typeof id === "string") storable("id", id);
  const message: McpRequestMessage = {
    kind: "request",
    method,
    tool,
    name: tool ?? routedName(method, params),
    revision: revisionOf(params),
    id,
    isNotification: false,
    taskId: taskIdOf(method, params),
    taskAugmented: tool !== null && isRecord(params) && isRecord(params.task),
    arguments: tool !== null && isRecord(params) ? params.arguments : undefined,
  };
  const traceContext = traceContextOf(params);
  if (traceContext) message.traceContext = traceContext;
  if (
    tool !== null &&
    isRecord(params) &&
    isRecord(params._meta) &&
    params._meta[X402_PAYMENT] !== undefined
  ) {
    message.payment = params._meta[X402_PAYMENT];
  }
  return message;
}

function revisionOf(params: unknown): string | null {
  if (!isRecord(params) || !isRecord(params._meta)) return null;
  const revision = params._meta["io.modelcontextprotocol/protocolVersion"];
  return typeof revision === "string" ? revision : null;
}

/** The W3C trace context a caller put in `params._meta` (MCP's own propagation), read from the parse. */
function traceContextOf(params: unknown): McpRequestMessage["traceContext"] {
  if (!isRecord(params) || !isRecord(params._meta)) return undefined;
  const { traceparent, tracestate } = params._meta;
  if (typeof traceparent !== "string") return undefined;
  return typeof tracestate === "string" ? { traceparent, tracestate } : { traceparent };
}

function toolOf(params: unknown): string {
  const name = isRecord(params) ? params.name : undefined;
  if (typeof name !== "string" || name === "") {
    throw invalid("tools/call requires params.name, a non-empty string");
  }
  storable("params.name", name);
  if (byteLength(name) > MCP_NAME_MAX_BYTES) {
    throw invalid(`params.name must be at most ${MCP_NAME_MAX_BYTES} bytes`);
  }
  return name;
}

function routedName(method: string, params: unknown): string | null {
  if (!isRecord(params)) return null;
  const value =
    method === "prompts/get"
      ? params.name
      : method === "resources/read"
        ? params.uri
        : TASK_METHODS.has(method)
          ? params.taskId
          : undefined;
  return typeof value === "string" ? value : null;
}

/** MCP's task methods that name their task (`params.taskId`): 2025-11-25's and the extension's. */
const NAMING_TASK: ReadonlySet<string> = new Set([
  "tasks/get",
  "tasks/result",
  "tasks/update",
  "tasks/cancel",
]);

/** The task id to record: a string the record can hold, else null (the call goes on unrecorded). */
function taskIdOf(method: string, params: unknown): string | null {
  if (!NAMING_TASK.has(method) || !isRecord(params)) return null;
  const id = params.taskId;
  if (typeof id !== "string" || id === "" || byteLength(id) > MCP_TASK_ID_MAX_BYTES) return null;
  return id.includes("\u0000") || LONE_SURROGATE.test(id) ? null : id;
}

/** The tasks extension's methods that name their task (`params.taskId`). */
const TASK_METHODS: ReadonlySet<string> = new Set(["tasks/get", "tasks/update", "tasks/cancel"]);

const RETRYABLE: ReadonlySet<string> = new Set([
  "initialize",
  "tools/list",
  "resources/list",
  "prompts/list",
]);

/**
 * Whether a transient upstream failure of this MCP method may be retried (docs/mcp.md, Retries): only
 * the read-only discovery calls and initialize. `tools/call` has side effects and is never
 * retried; neither is anything else, including responses and notifications.
 */
export function isRetryableMcpMethod(method: string | null): boolean {
  return method !== null && RETRYABLE.has(method);
}

function byteLength(s: string): number {
  return Buffer.byteLength(s, "utf8");
}

// With the u flag a surrogate pair is one code point, so this matches only unpaired halves.
const LONE_SURROGATE = /\p{Surrogate}/u;

/**
 * Method, tool name and request id are recorded in Postgres, which cannot hold U+0000 (the NUL
 * rule of @gw/http) nor, in json/jsonb, an unpaired surrogate (`"\ud800"` is valid JSON text but
 * no Unicode string): 400 naming the field, never a 500 from the store.
 */
function storable(field: string, s: string): void {
  if (s.includes("\u0000")) throw invalid(`${field} must not contain NUL characters`);
  if (LONE_SURROGATE.test(s)) throw invalid(`${field} must not contain unpaired surrogates`);
}
