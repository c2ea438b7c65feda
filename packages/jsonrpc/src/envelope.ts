import { isRecord, type JsonObject, parseJson } from "./guards.ts";

/**
 * The id of a request as the gateway reads it: a string or a number. JSON-RPC 2.0 also allows
 * null but discourages it; MCP and A2A both forbid it, so a request with id null is refused here.
 * A response may carry id null (its request could not be parsed, JSON-RPC 2.0 §5).
 */
export type JsonRpcId = string | number;

/** `params` of a request or notification: by name, by position, or absent. */
export type JsonRpcParams = JsonObject | unknown[] | undefined;

/** The error object of a JSON-RPC error response. */
export type JsonRpcErrorObject = { code: number; message: string; data?: unknown };

/**
 * One JSON-RPC 2.0 message, classified. `message` is the object as parsed, for the fields a
 * protocol reads beyond the envelope.
 *
 * - `request`: a method and an id; the peer answers it.
 * - `notification`: a method and no id; nothing answers it.
 * - `response`: a result or an error (`outcome`) for the request whose id it carries.
 */
export type JsonRpcMessage =
  | { kind: "request"; method: string; id: JsonRpcId; params: JsonRpcParams; message: JsonObject }
  | { kind: "notification"; method: string; params: JsonRpcParams; message: JsonObject }
  | {
      kind: "response";
      id: JsonRpcId | null;
      outcome: "result" | "error";
      message: JsonObject;
    };

/** Why a value is not a JSON-RPC 2.0 message, in words a caller can act on (never its bytes). */
export type NotJsonRpc = { kind: "invalid"; problem: string };

/**
 * Classifies one parsed value as a JSON-RPC 2.0 message and checks its envelope: `jsonrpc`,
 * the member types of a request (`method`, `params`, `id`) and of a response (`result` xor
 * `error`, an error object with an integer code and a string message, `id`). Protocol rules on
 * top (which methods, what a method's params hold, batches) are the protocol's own.
 */
export function readMessage(value: unknown): JsonRpcMessage | NotJsonRpc {
  if (!isRecord(value)) return invalid("a JSON-RPC 2.0 message must be an object");
  if (value.jsonrpc !== "2.0") return invalid('jsonrpc must be "2.0"');
  if ("method" in value) return requestOf(value);
  if ("result" in value || "error" in value) return responseOf(value);
  return invalid("must be a JSON-RPC 2.0 request, notification or response");
}

/** `readMessage` of a text: not JSON is invalid too. */
export function parseMessage(text: string): JsonRpcMessage | NotJsonRpc {
  const value = parseJson(text);
  return value === undefined ? invalid("must be a JSON-RPC 2.0 message in valid JSON") : readMessage(value);
}

function requestOf(msg: JsonObject): JsonRpcMessage | NotJsonRpc {
  const { method, params } = msg;
  if (typeof method !== "string" || method === "") return invalid("method must be a non-empty string");
  if ("result" in msg || "error" in msg) return invalid("a JSON-RPC request must not carry result or error");
  if (params !== undefined && !isRecord(params) && !Array.isArray(params)) {
    return invalid("params must be an object or an array");
  }
  const p = params as JsonRpcParams;
  if (!("id" in msg)) return { kind: "notification", method, params: p, message: msg };
  const { id } = msg;
  if (typeof id !== "string" && typeof id !== "number") return invalid("id must be a string or a number");
  return { kind: "request", method, id, params: p, message: msg };
}

function responseOf(msg: JsonObject): JsonRpcMessage | NotJsonRpc {
  if ("result" in msg && "error" in msg) {
    return invalid("a JSON-RPC response carries either result or error, not both");
  }
  if ("error" in msg && !isErrorObject(msg.error)) {
    return invalid("error must be an object with an integer code and a string message");
  }
  const { id } = msg;
  if (id !== null && typeof id !== "string" && typeof id !== "number") {
    return invalid("id must be a string, a number or null");
  }
  return { kind: "response", id, outcome: "error" in msg ? "error" : "result", message: msg };
}

function isErrorObject(v: unknown): v is JsonRpcErrorObject {
  return isRecord(v) && Number.isInteger(v.code) && typeof v.message === "string";
}

function invalid(problem: string): NotJsonRpc {
  return { kind: "invalid", problem };
}

/**
 * The response to the request `id` (same type and value: 7 and "7" differ), or null when `value`
 * is anything else: a notification, a request, another id, not JSON-RPC.
 */
export function responseTo(value: unknown, id: JsonRpcId): JsonObject | null {
  const msg = readMessage(value);
  return msg.kind === "response" && msg.id === id ? msg.message : null;
}

/** The `result` object of a success response, or null (an error, not an object, not JSON-RPC). */
export function resultObject(value: unknown): JsonObject | null {
  const msg = readMessage(value);
  if (msg.kind !== "response" || msg.outcome !== "result") return null;
  return isRecord(msg.message.result) ? msg.message.result : null;
}

/** The error codes JSON-RPC 2.0 defines (§5.1). */
export const JSON_RPC_ERRORS = {
  parse: -32700,
  invalidRequest: -32600,
  methodNotFound: -32601,
  invalidParams: -32602,
  internal: -32603,
} as const;

/** A success response. */
export function resultMessage(id: JsonRpcId | null, result: unknown): JsonObject {
  return { jsonrpc: "2.0", id, result };
}

/** An error response; `data` only when given. */
export function errorMessage(
  id: JsonRpcId | null,
  code: number,
  message: string,
  data?: unknown,
): JsonObject {
  const error: JsonObject = { code, message };
  if (data !== undefined) error.data = data;
  return { jsonrpc: "2.0", id, error };
}
