import { invalid, LIMITS } from "@gw/core";
import { isRecord, type JsonObject, type JsonRpcId, readMessage } from "@gw/jsonrpc";
import { A2A_PUSH_CONFIG_METHODS, A2A_SEND_METHODS } from "./methods.ts";

/**
 * One A2A JSON-RPC request as the gateway reads it (docs/a2a.md): what the record keeps (the
 * method, the task and context it names), what policy and approvals judge (`arguments`: the
 * params), and the webhook URLs it asks the agent to call (checked against the SSRF rules before
 * anything is forwarded). The body itself is forwarded verbatim.
 */
export type A2aRequest = {
  readonly kind: "request";
  readonly method: string;
  readonly tool: null;
  readonly id: JsonRpcId;
  /** `params` (an object; `{}` when absent): approvals bind its canonical JSON, CEL reads it. */
  readonly arguments: JsonObject;
  readonly taskId: string | null;
  readonly contextId: string | null;
  readonly pushUrls: readonly string[];
};

const decoder = new TextDecoder("utf-8", { fatal: true });
const NAME_MAX_BYTES = LIMITS.nameMaxBytes;

/**
 * Parses the body of a call to an A2A agent: exactly one JSON-RPC 2.0 request with an id and
 * by-name params (A2A has no notifications from a client, and no batches). Anything else is
 * refused with a caller-safe 400 that never echoes the body.
 */
export function parseA2aRequest(body: Uint8Array): A2aRequest {
  let value: unknown;
  try {
    value = JSON.parse(decoder.decode(body));
  } catch {
    throw invalid("A2A request body must be a JSON-RPC 2.0 request in valid JSON");
  }
  if (Array.isArray(value)) {
    throw invalid("JSON-RPC batches are not supported: send one JSON-RPC 2.0 request per call");
  }
  const msg = readMessage(value);
  if (msg.kind === "invalid") {
    throw invalid(msg.problem.startsWith("must ") ? `A2A request body ${msg.problem}` : msg.problem);
  }
  if (msg.kind !== "request") throw invalid("A2A request body must be a JSON-RPC 2.0 request with an id");
  if (msg.params !== undefined && !isRecord(msg.params)) throw invalid("params must be an object");
  const { method } = msg;
  if (!recordable(method)) {
    throw invalid(`method must be at most ${NAME_MAX_BYTES} bytes, without NUL characters`);
  }
  const params = msg.params ?? {};
  const message = isRecord(params.message) ? params.message : null;
  return {
    kind: "request",
    method,
    tool: null,
    id: msg.id,
    arguments: params,
    taskId: idOf(params.taskId) ?? idOf(message?.taskId) ?? idOf(params.id),
    contextId: idOf(message?.contextId) ?? idOf(params.contextId),
    pushUrls: pushUrlsOf(method, params),
  };
}

/**
 * The webhook URLs a request registers: a push notification config's (v1.0 `url`, v0.3
 * `pushNotificationConfig.url`) or one carried by a message's send configuration.
 */
function pushUrlsOf(method: string, params: JsonObject): string[] {
  const out: string[] = [];
  const add = (v: unknown) => {
    if (isRecord(v) && typeof v.url === "string") out.push(v.url);
  };
  if (A2A_PUSH_CONFIG_METHODS.has(method)) {
    add(params);
    add(params.pushNotificationConfig);
    add(params.config);
  }
  if (A2A_SEND_METHODS.has(method) && isRecord(params.configuration)) {
    add(params.configuration.taskPushNotificationConfig);
    add(params.configuration.pushNotificationConfig);
  }
  return out;
}

/** A task or context id the record can hold (a string, not too long, nothing Postgres refuses). */
export function idOf(v: unknown): string | null {
  return typeof v === "string" && v !== "" && recordable(v) ? v : null;
}

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

function recordable(s: string): boolean {
  return (
    s.length <= NAME_MAX_BYTES &&
    Buffer.byteLength(s) <= NAME_MAX_BYTES &&
    !s.includes("\u0000") &&
    !LONE_SURROGATE.test(s)
  );
}
