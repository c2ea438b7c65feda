import { type Attributes, trace } from "@opentelemetry/api";
import {
  ATTR_GEN_AI_AGENT_ID,
  ATTR_GEN_AI_AGENT_NAME,
  ATTR_GEN_AI_CONVERSATION_ID,
  ATTR_GEN_AI_OPERATION_NAME,
  ATTR_JSONRPC_REQUEST_ID,
  ATTR_NETWORK_PROTOCOL_NAME,
  ATTR_RPC_METHOD,
  GEN_AI_OPERATION_NAME_VALUE_INVOKE_AGENT,
} from "@opentelemetry/semantic-conventions/incubating";

/**
 * A2A calls in traces, by the OpenTelemetry GenAI agent conventions (docs/operations.md,
 * Telemetry): the call is an `invoke_agent` of the agent it goes to, the A2A context is the
 * conversation, the JSON-RPC method and id are the RPC's. Every attribute name comes from
 * `@opentelemetry/semantic-conventions`. Nothing is built unless the active span records.
 */
export type A2aTraced = {
  readonly method: string;
  readonly id: string | number;
  readonly contextId: string | null;
};

/** The conventions' attributes of one A2A call. */
export function a2aAttributes(m: A2aTraced, agent?: { id: string; name: string }): Attributes {
  const a: Attributes = {
    [ATTR_GEN_AI_OPERATION_NAME]: GEN_AI_OPERATION_NAME_VALUE_INVOKE_AGENT,
    [ATTR_RPC_METHOD]: m.method,
    [ATTR_JSONRPC_REQUEST_ID]: String(m.id),
    [ATTR_NETWORK_PROTOCOL_NAME]: "http",
  };
  if (agent) {
    a[ATTR_GEN_AI_AGENT_ID] = agent.id;
    a[ATTR_GEN_AI_AGENT_NAME] = agent.name;
  }
  if (m.contextId !== null) a[ATTR_GEN_AI_CONVERSATION_ID] = m.contextId;
  return a;
}

/** The request's span becomes the A2A call's: `invoke_agent {agent name}`, with the attributes above. */
export function traceA2aCall(m: A2aTraced, agent?: { id: string; name: string }): void {
  const span = trace.getActiveSpan();
  if (!span?.isRecording()) return;
  span.updateName(agent ? `${GEN_AI_OPERATION_NAME_VALUE_INVOKE_AGENT} ${agent.name}` : m.method);
  span.setAttributes(a2aAttributes(m, agent));
}

/** The attributes of a stored A2A call on the active span (the worker's process span), if it records. */
export function annotateA2aSpan(method: string, id: string | number | null): void {
  const span = trace.getActiveSpan();
  if (!span?.isRecording()) return;
  const a: Attributes = {
    [ATTR_GEN_AI_OPERATION_NAME]: GEN_AI_OPERATION_NAME_VALUE_INVOKE_AGENT,
    [ATTR_RPC_METHOD]: method,
  };
  if (id !== null) a[ATTR_JSONRPC_REQUEST_ID] = String(id);
  span.setAttributes(a);
}
