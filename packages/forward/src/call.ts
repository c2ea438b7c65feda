import type { IncomingMessage, ServerResponse } from "node:http";
import { ERROR_CLASS, type InvocationHandle, outcomeOfStatus } from "@gw/invocations";
import type { PaymentResponse } from "@gw/payments";
import { type Logger, recordMcpOperation } from "@gw/telemetry";
import { type Target, targetOf } from "@gw/upstream";
import { type MemberAgent, type VirtualServer, virtualServer } from "@gw/virtual";
import type { Forwarded } from "./forwarded.ts";
import { type CallerFacts, type GuardState, type Protocol, protocolOf } from "./protocols/index.ts";

/**
 * An admitted call as step 9 sees it: what the pipeline built (`Forwarded`), whether it came
 * through steps 1–8 just now (streaming) or was stored and claimed by a worker (transactional),
 * and what the process forwarding it adds (`Local`), joined by `forwardCallOf`. The answer hooks
 * see it as an `AnswerCall` (protocols/protocol.ts), which it satisfies.
 */
export type ForwardCall = Readonly<Forwarded> & {
  /** The agent's own upstream (null for a virtual MCP server); `chooseTarget` decides where the call goes. */
  readonly target: Target | null;
  /**
   * A virtual MCP server's name and callable members now (docs/mcp.md, Virtual MCP servers); null
   * for every other agent. Its requests are routed to one member or answered from several.
   */
  readonly server: VirtualServer | null;
  /** The protocol the agent speaks: how the call is retried, collected and which answer hooks apply. */
  readonly speaks: Protocol;
  /** What the answer guard learns during the call (null when no answer rule applies). */
  readonly guard: GuardState | null;
  /**
   * A settled MCP tool payment's receipt, set once settlement succeeded: the answer's result
   * carries it in `_meta["x402/payment-response"]` (docs/payments.md, MCP tool calls).
   */
  paymentResponse: PaymentResponse | null;
  /**
   * The client capabilities an older client's session relays (`@gw/virtual` relays.ts): the member
   * session pool a routed call of a virtual server uses; absent or "": none.
   */
  readonly relays?: string;
} & Omit<Local, "target">;

/** What the process that forwards a call adds to it: nothing of it is stored with the call. */
export type Local = {
  /**
   * The agent's upstream as the process already parsed it (the proxy's agent cache); absent: it
   * is parsed from `upstreamUrl`.
   */
  readonly target?: Target | null;
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
  readonly caller?: CallerFacts | undefined;
  /** Headers for the caller's answer; settlement adds its receipt here. */
  readonly responseHeaders: Record<string, string>;
  /** The record port: how the invocation ends (both modes write through the lifecycle). */
  readonly record: InvocationHandle;
};

/**
 * How the process finds a member agent of a virtual MCP server when the call is made: the agent
 * cache on the streaming path, the store in the worker.
 */
export type AgentLookup = (
  tenantId: string,
  agentId: string,
) => Promise<{ readonly row: Omit<MemberAgent, "target">; readonly target: Target | null } | undefined>;

/**
 * The one adapter from a forwarded call to the call step 9 runs, for both modes: the process's
 * own part added, the upstream parsed unless the process had it, and a virtual server's members
 * looked up as they are now (a member deactivated or deleted since is left out).
 */
export function forwardCallOf(
  call: Forwarded,
  local: Local,
  deps: { readonly agents: AgentLookup; readonly config: { GW_VERSION: string; publicUrl: string } },
): ForwardCall | Promise<ForwardCall> {
  // Every field by name, in one literal: a spread of the forwarded call followed by the process's
  // own fields made V8 build a fresh hidden class per call for each added field (6.5 KiB of
  // garbage per call, the proxy's largest allocation; docs/performance.md, Streaming: allocation
  // per call).
  const adapted: ForwardCall = {
    invocationId: call.invocationId,
    tenantId: call.tenantId,
    agentId: call.agentId,
    method: call.method,
    upstreamUrl: call.upstreamUrl,
    virtual: call.virtual,
    credentialRef: call.credentialRef,
    protocol: call.protocol,
    rpcMethod: call.rpcMethod,
    rpcId: call.rpcId,
    captureBodies: call.captureBodies,
    emitReceipts: call.emitReceipts,
    headers: call.headers,
    clientAddress: call.clientAddress,
    payment: call.payment,
    prices: call.prices,
    answerGuard: call.answerGuard,
    sub: call.sub,
    target: local.target !== undefined ? local.target : call.upstreamUrl ? targetOf(call.upstreamUrl) : null,
    server: null,
    speaks: protocolOf(call.protocol),
    guard: call.answerGuard ? { secret: "", outcome: null } : null,
    paymentResponse: null,
    subjectToken: local.subjectToken,
    caller: local.caller,
    responseHeaders: local.responseHeaders,
    record: recordOf(call, local.record),
  };
  const spec = call.virtual;
  if (spec === null) return adapted;
  const lookup = async (id: string) => {
    const found = await deps.agents(call.tenantId, id);
    return found ? { ...found.row, target: found.target } : undefined;
  };
  return virtualServer(spec, lookup, deps.config).then((server) => ({ ...adapted, server }));
}

/** The call's record port: measured for MCP, and binding a paid tool call's receipt. */
function recordOf(call: Forwarded, record: InvocationHandle): InvocationHandle {
  // MCP's server metric counts MCP calls only (an A2A method travels in the same field).
  const measuredRecord =
    call.protocol === "mcp" && call.rpcMethod !== null ? measured(record, call.rpcMethod) : record;
  const tool = call.payment?.tool;
  if (!tool) return measuredRecord;
  const binding = {
    tool: { name: tool.name, pinned_digest: tool.pinnedDigest ?? null },
    decision: tool.decision ?? null,
  };
  return {
    complete: (status, facts, extras) => measuredRecord.complete(status, facts, { ...extras, binding }),
    fail: (failure, facts, extras) => measuredRecord.fail(failure, facts, { ...extras, binding }),
    failUnsettled: (facts, extras) => measuredRecord.failUnsettled(facts, { ...extras, binding }),
  };
}

/**
 * An MCP call's record port that also reports the call to `mcp.server.operation.duration` as it
 * ends (every end of a call, on both paths, goes through its record): the facts' latency, the
 * error class as `error.type`.
 */
function measured(record: InvocationHandle, method: string): InvocationHandle {
  const seconds = (ms: number | null | undefined) => (ms ?? 0) / 1000;
  return {
    complete: (status, facts, extras) => {
      recordMcpOperation(seconds(facts.latencyMs), { method, errorType: outcomeOfStatus(status).errorClass });
      return record.complete(status, facts, extras);
    },
    fail: (failure, facts, extras) => {
      recordMcpOperation(seconds(facts?.latencyMs), { method, errorType: ERROR_CLASS[failure] });
      return record.fail(failure, facts, extras);
    },
    failUnsettled: (facts, extras) => {
      recordMcpOperation(seconds(facts.latencyMs), { method, errorType: "settlement_failed" });
      return record.failUnsettled(facts, extras);
    },
  };
}

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
