import type { IncomingMessage, ServerResponse } from "node:http";
import type { InvocationHandle } from "@gw/invocations";
import type { AdmittedPayment } from "@gw/payments";
import type { Logger } from "@gw/telemetry";
import type { Target } from "@gw/upstream";
import type { VirtualServer } from "@gw/virtual";

/**
 * An admitted call as step 9 sees it: the fields both modes have, whether the call came through
 * steps 1–8 just now (streaming) or was stored and claimed by a worker (transactional).
 */
export type ForwardCall = {
  readonly tenantId: string;
  readonly agentId: string;
  readonly invocationId: string;
  /** POST on both modes; GET (standalone SSE stream) and DELETE (session end) for MCP streaming. */
  readonly method: "POST" | "GET" | "DELETE";
  /** The agent's own upstream (null for a virtual MCP server); `chooseTarget` decides where the call goes. */
  readonly target: Target | null;
  /**
   * A virtual MCP server's name and callable members (docs/mcp.md, Virtual MCP servers); null for
   * every other agent. Its requests are routed to one member or answered from several.
   */
  readonly virtual: VirtualServer | null;
  readonly protocol: "http" | "mcp";
  /** JSON-RPC method of an MCP call: it decides whether a retry is allowed. */
  readonly mcpMethod: string | null;
  /** JSON-RPC id of an MCP request: a collected event stream is read up to its response. */
  readonly mcpRequestId: string | number | null;
  readonly captureBodies: boolean;
  /** false: the agent emits no receipt, so nothing is hashed. */
  readonly emitReceipts: boolean | null | undefined;
  readonly credentialRef: string | null;
  /**
   * The caller's own bearer token, read only when the credential exchanges it (oauth2_token_exchange,
   * docs/credentials.md): from the request on the streaming path, unsealed from the stored request
   * in the worker. The caller's token itself never goes upstream.
   */
  readonly subjectToken: () => string | undefined;
  /**
   * Who made the call, as policy conditions see a caller: known on the streaming path, where a
   * filtered tool list can be judged for this caller; absent in the worker (docs/tools.md).
   */
  readonly caller?: {
    readonly principal: { sub: string; scopes: readonly string[]; claims: Readonly<Record<string, unknown>> };
    readonly agentName: string;
    readonly mode: "streaming" | "transactional";
  };
  /** The verified x402 payment, settled before the dial when its tenant has a facilitator. */
  readonly payment: AdmittedPayment | null | undefined;
  /** The caller's headers to forward (upstreamRequestHeaders filters them). */
  readonly headers: readonly string[];
  readonly clientAddress: string | undefined;
  /** Headers for the caller's answer; settlement adds its receipt here. */
  readonly responseHeaders: Record<string, string>;
  /** The record port: how the invocation ends (both modes write through the lifecycle). */
  readonly record: InvocationHandle;
};

/** The request body: bytes already held, the live request stream, or none (an MCP GET/DELETE). */
export type BodySource = Buffer | IncomingMessage | null;

/** The caller of a relayed call: its request, its response and its logger (the exchange). */
export type Caller = {
  readonly incoming: IncomingMessage;
  readonly outgoing: ServerResponse;
  readonly requestId: string;
  readonly log: Logger;
};

/**
 * Where the answer goes. `relay`: to the caller as it arrives, with backpressure, never buffered
 * (streaming); the record is written in the background (`track`, awaited by graceful shutdown).
 * `collect`: read whole for the poll (the worker); the record is written before `forward` returns.
 */
export type AnswerSink =
  | {
      readonly kind: "relay";
      readonly caller: Caller;
      readonly track: (p: Promise<unknown>) => void;
      /** performance.now() when the call arrived: the gateway's added duration ends at the dial. */
      readonly start: number;
    }
  | { readonly kind: "collect"; readonly caller: { readonly log: Logger } };

/**
 * The gateway's own headers on the caller's response, the one place both proxy modes take them
 * from: the invocation id and whatever the steps added (policy warning, payment receipt).
 */
export function gatewayHeaders(call: {
  readonly responseHeaders: Record<string, string>;
  readonly invocationId: string;
}): Record<string, string> {
  return { ...call.responseHeaders, "x-gateway-invocation-id": call.invocationId };
}
