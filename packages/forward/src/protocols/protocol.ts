import type { IncomingHttpHeaders } from "node:http";
/** The protocols an agent may speak: the one list (`agents.protocol`), each with its module here. */
import type { AgentProtocol } from "@gw/db";
import type { Facts, NewInvocation, RECORDED, RequestRecordedKey } from "@gw/invocations";
import type { JsonRpcId } from "@gw/jsonrpc";
import type { AnswerHead, AnswerHook } from "../answer/hooks.ts";

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
  /** A learner of record fields from this answer, or null (every protocol but A2A: nothing to learn). */
  learn(head: AnswerHead): AnswerLearner | null;
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
