import { a2a } from "./a2a/index.ts";
import { http } from "./http.ts";
import { mcp } from "./mcp.ts";
import {
  type AnswerFeatures,
  type AnswerHooks,
  PROTOCOL_NAMES,
  type Protocol,
  type ProtocolName,
} from "./protocol.ts";

export * from "./a2a/index.ts";
export { CONNECT_REQUEST_STATE, connectionRequired, MCP_URL_ELICITATION_REQUIRED } from "./connect.ts";
export * from "./protocol.ts";

const PROTOCOLS: { readonly [N in ProtocolName]: Protocol<N> } = { http, mcp, a2a };

/** The protocol an agent speaks (a lookup: resolve it once per call and keep it). */
export function protocolOf(name: ProtocolName): Protocol {
  return PROTOCOLS[name];
}

/** Whether a stored name is a protocol this build knows (a row may predate or outlive one). */
export function isProtocolName(name: unknown): name is ProtocolName {
  return typeof name === "string" && Object.hasOwn(PROTOCOLS, name);
}

/** Each protocol's answer hooks of those a process offers, resolved once when the process starts. */
export function answerHooksFor(features: AnswerFeatures): AnswerHooks {
  const out: { [P in ProtocolName]?: AnswerHooks[P] } = {};
  for (const name of PROTOCOL_NAMES) out[name] = PROTOCOLS[name].answerHooks(features);
  return out;
}
