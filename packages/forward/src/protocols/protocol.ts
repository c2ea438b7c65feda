import type { IncomingHttpHeaders } from "node:http";
/** The protocols an agent may speak: the one list (`agents.protocol`), each with its module here. */
import type { AgentProtocol } from "@gw/db";
import type { Facts, NewInvocation, RECORDED, RequestRecordedKey } from "@gw/invocations";
import type { JsonRpcId } from "@gw/jsonrpc";
import type { PaymentResponse } from "@gw/payments";
import type { Forwarded } from "../forwarded.ts";

export { AGENT_PROTOCOLS as PROTOCOL_NAMES } from "@gw/db";
export type ProtocolName = AgentProtocol;

/**
 * What the record and policy learn from a request, whatever the protocol: the method and tool
 * recorded (`mcp_method`, `mcp_tool`), the id an answer is matched by, and the arguments policy
 * conditions may read. An MCP message (`McpMessage`) is one.
 */
export type RequestFacts = {
  readonly kind: "request" | "notification" | "response";
  readonly method: string | null;
  readonly tool: string | null;
  /** The JSON-RPC id of a request (its answer is matched by it); null otherwise. */
  readonly id: string | number | null;
  /**
   * What policy conditions read as `call.arguments` and approvals bind: `params.arguments` of an
   * MCP tool call, the `params` of an A2A request; never recorded.
   */
  readonly arguments?: unknown;
  /** An MCP tools/call's `params._meta["x402/payment"]` (docs/payments.md, MCP tool calls). */
  readonly payment?: unknown;
  /**
   * Webhook URLs the request asks the agent to call (A2A push notification configs): checked
   * against the SSRF rules before anything is forwarded (docs/a2a.md).
   */
  readonly pushUrls?: readonly string[];
};

/**
 * The invocation fields a parsed request fills (`Protocol.recorded`): those of the recorded fields
 * declared as learned from the request (`RECORDED` in packages/db, schema/recorded.ts).
 */
export type RecordedFields = Partial<Pick<NewInvocation, RequestRecordedKey>>;

/**
 * Learns record fields from an answer as it passes (A2A: the task, its context and state), fed
 * each chunk after it was delivered (a collected answer: once, whole); never delays or alters it.
 */
export type AnswerLearner = {
  add(chunk: Buffer): void;
  facts(): Facts;
};

/** The agent a call goes to, as a protocol's parse sees it (for its telemetry). */
export type CalledAgent = { readonly id: string; readonly name: string };

/**
 * The answer-side features a process offers (the tool catalog's hook, packages/tools); each
 * protocol says which apply to its answers.
 */
export type AnswerFeatures = {
  /** Learns from `tools/list` answers and filters them per caller (docs/tools.md). */
  readonly tools?: AnswerHook;
  /** Answer guardrails: the tenant's answer rules judge the answer (docs/policy.md). */
  readonly guard?: AnswerHook;
};

/** One text value of an answer: the span of its JSON string literal, and its decoded text. */
export type TextSpan = { readonly start: number; readonly end: number; readonly text: string };

/**
 * Which texts of a protocol's answers answer rules inspect (docs/policy.md "Answer guardrails"):
 * the one place a protocol says so. The guard (packages/forward/src/answer/guard.ts) does the rest:
 * holding, decoding, judging, redacting, blocking.
 */
export type AnswerTexts = {
  /** Whether the answer to a call of this method is inspected (the rest pass unread). */
  inspects(method: string | null): boolean;
  /**
   * The text values of one JSON-RPC response message, as spans of its JSON text; null when it is
   * not a response this protocol can read (the answer is then blocked).
   */
  texts(json: string): TextSpan[] | null;
  /** The response that replaces a blocked one, with the request's id. */
  blocked(id: JsonRpcId | null): string;
  /**
   * Which events of an SSE answer are inspected: the one response to the request, held until it
   * arrived (MCP), or each event as it passes, every one a response to the request (A2A's
   * streams, guard-events.ts).
   */
  readonly events: "response" | "each";
};

/** An upstream answer's head, as every answer-side feature first sees it. */
export type AnswerHead = {
  readonly status: number;
  readonly headers: IncomingHttpHeaders;
};

/**
 * An upstream answer as a feature reshapes it: its head, and its body when it was held or
 * collected (null: the body streams past as the upstream sends it).
 */
export type Answer = AnswerHead & { readonly body: Buffer | null };

/** What a per-event transform makes of one upstream chunk. */
export type EventStep = {
  /** The bytes the caller receives now (the events the chunk closed, as judged). */
  readonly out: Buffer;
  /** The stream ends after `out`: the rest of the upstream is abandoned. */
  readonly end: boolean;
};

/**
 * An SSE answer reshaped one event at a time (`BodyUse.each`: A2A's streams under answer rules).
 * The relay and the collection path run it alike: a relayed stream through `eachEventSource`, a
 * collected one through `eachEventWhole` (answer/each-event.ts). Only the event being read is held.
 */
export type EventTransform = {
  /** The next chunk of the upstream's body. */
  push(chunk: Buffer): Promise<EventStep>;
  /**
   * The upstream's body ended (`whole`) or broke off: what is left to send. An event no blank
   * line closed is never sent (a reader would discard it too).
   */
  end(whole: boolean): Buffer;
  /** The body could not be read at all (another feature held it past its bound): its replacement. */
  refused(): Buffer;
};

/**
 * What one feature wants of one answer's body, decided from the call and the head alone (so an
 * answer nobody wants costs nothing more than the question).
 *
 * - `hold: false`: the body is teed as it passes to the caller, bounded at `maxBytes`, and `seen`
 *   gets it once it was delivered (null when it was larger or did not arrive whole). The caller's
 *   answer is neither delayed nor altered.
 * - `hold: true`: the answer is read first (bounded at `maxBytes`) and the caller receives what
 *   `reshape` returns; `whole` is false when the body passed `maxBytes` (then `body` holds none of
 *   it and the upstream was abandoned). A relayed held answer gets its own Content-Length.
 */
export type BodyUse = {
  readonly hold: boolean;
  readonly maxBytes: number;
  readonly seen?: (body: Buffer | null) => void;
  readonly reshape?: (answer: Answer, whole: boolean) => Answer | Promise<Answer>;
  /**
   * A held answer whose end is known before the stream's (an SSE answer's response event): fed
   * each chunk, true once what is held is complete; the rest of the stream is not read.
   */
  readonly endsAt?: (chunk: Buffer) => boolean;
  readonly each?: EventTransform;
};

/**
 * The answer guard's part of one call: the secret step 9 injected (set once the credential is
 * opened), and what the guard did to the answer, recorded with the invocation.
 */
export type GuardState = {
  secret: string;
  outcome: {
    action: "redacted" | "blocked" | "warned";
    findings: Readonly<Record<string, number>>;
  } | null;
};

/**
 * Who made the call, as policy conditions see a caller: known on the streaming path, where a
 * filtered tool list can be judged for this caller; absent in the worker (docs/tools.md).
 */
export type CallerFacts = {
  readonly principal: {
    sub: string;
    scopes: readonly string[];
    claims: Readonly<Record<string, unknown>>;
  };
  readonly agentName: string;
  readonly mode: "streaming" | "transactional";
};

/**
 * A call as the answer hooks see it: what they read of step 9's call (`ForwardCall` in call.ts
 * is one). Declared here, beside the hooks' other types, so that protocol modules and the answer
 * room name the call without importing the forward step (imports run one way: call.ts and
 * answer/ read protocols/, never the other way).
 */
export type AnswerCall = Readonly<
  Pick<
    Forwarded,
    | "tenantId"
    | "agentId"
    | "method"
    | "protocol"
    | "rpcMethod"
    | "rpcId"
    | "payment"
    | "prices"
    | "answerGuard"
  >
> & {
  /** The protocol the agent speaks: which texts of its answers the guard reads. */
  readonly speaks: Protocol;
  /** What the answer guard learns during the call (null when no answer rule applies). */
  readonly guard: GuardState | null;
  /** A settled MCP tool payment's receipt (null until settlement succeeded). */
  readonly paymentResponse: PaymentResponse | null;
  readonly caller?: CallerFacts | undefined;
  /** Headers for the caller's answer (a guard's warning is added here). */
  readonly responseHeaders: Record<string, string>;
};

/**
 * An answer-side feature (the tool catalog learning from and filtering `tools/list` answers).
 * `request` is the request body when it was held (MCP POSTs on both paths), else null. A hook
 * answers synchronously for the answers it does not want; it may wait (a cached read) for those
 * it does.
 */
export type AnswerHook = (
  call: AnswerCall,
  head: AnswerHead,
  request: Buffer | null,
) => BodyUse | null | Promise<BodyUse | null>;

/** The answer hooks of each protocol, resolved once per process (`answerHooksFor`). */
export type AnswerHooks = Readonly<Partial<Record<ProtocolName, readonly AnswerHook[]>>>;

/**
 * What one protocol means to the gateway: the one place the pipeline, step 9, the worker and
 * policy learn how a call of an agent speaking it is parsed, retried, recorded and answered
 * (docs/architecture.md, Adding a protocol). A process resolves it once per call (`protocolOf`:
 * a lookup).
 */
export type Protocol<N extends ProtocolName = ProtocolName> = {
  readonly name: N;
  /** Methods served on the streaming path besides POST (GET: a standalone stream; DELETE: session end). */
  readonly streamMethods: ReadonlySet<string>;
  /** Whether a streamed POST's body is held (read whole, under the transactional cap) to be parsed. */
  readonly holdsBody: boolean;
  /**
   * Parses and checks a held request body and its headers: a DomainError (400) when it is not a
   * request of this protocol; null when the protocol learns nothing from a body (http).
   */
  parse(body: Buffer, headers: IncomingHttpHeaders, agent?: CalledAgent): RequestFacts | null;
  /**
   * What the protocol records of its calls beyond what every call has: its entry of the one
   * declaration (`RECORDED` in packages/db, schema/recorded.ts), which the stored record, the list
   * filters, the API and the console derive from.
   */
  readonly records: (typeof RECORDED)[N];
  /** The request-side recorded fields of a parsed request (null: nothing was parsed). */
  recorded(facts: RequestFacts | null): RecordedFields;
  /**
   * A learner of record fields from this answer to a call of `method`, or null (nothing to learn:
   * HTTP; MCP but for task-naming methods).
   */
  learn(head: AnswerHead, method: string | null): AnswerLearner | null;
  /** Whether transient failures (connection errors, 502/503/504) of a call to this method may be retried. */
  retryable(method: string | null): boolean;
  /**
   * Whether a call whose worker died mid-call may be made again: unlike a transient failure, the
   * upstream may well have done the work.
   */
  repeatable(method: string | null): boolean;
  /**
   * The id a collected (transactional) answer that is an event stream is read up to, its response
   * then stored as JSON (docs/mcp.md); null: every answer is stored as it came.
   */
  collectUpTo(requestId: string | number | null): string | number | null;
  /** Whether verified-action mode judges this protocol's calls (docs/verifier.md). */
  readonly verified: boolean;
  /**
   * Whether the proxy paths check `Origin` (docs/security.md, Origin check): the agent is an
   * endpoint a browser's script may be pointed at (MCP Streamable HTTP, A2A), whose transport says
   * the server MUST validate `Origin`; behind the gateway, the gateway is that server.
   */
  readonly checksOrigin: boolean;
  /** Which texts of its answers answer rules inspect; absent or null: none (they pass unread). */
  readonly answerTexts?: AnswerTexts | null;
  /**
   * Puts the protocol's telemetry attributes of a stored call (its method and JSON-RPC id) on the
   * active span: the worker's process span of a transactional call.
   */
  annotate(method: string, id: string | number | null): void;
  /** The answer hooks that apply to this protocol's answers, of those the process offers. */
  answerHooks(features: AnswerFeatures): readonly AnswerHook[];
};
