import {
  type Attributes,
  type Context,
  type Exception,
  isSpanContextValid,
  type Link,
  propagation,
  ROOT_CONTEXT,
  type Span,
  type SpanAttributes,
  type SpanAttributeValue,
  type SpanContext,
  type SpanKind,
  type SpanStatus,
  type TimeInput,
  trace,
} from "@opentelemetry/api";
import {
  ATTR_GEN_AI_OPERATION_NAME,
  ATTR_GEN_AI_PROMPT_NAME,
  ATTR_GEN_AI_TOOL_NAME,
  ATTR_JSONRPC_REQUEST_ID,
  ATTR_MCP_METHOD_NAME,
  ATTR_MCP_PROTOCOL_VERSION,
  ATTR_MCP_SESSION_ID,
  ATTR_NETWORK_PROTOCOL_NAME,
  ATTR_NETWORK_TRANSPORT,
  GEN_AI_OPERATION_NAME_VALUE_EXECUTE_TOOL,
  NETWORK_TRANSPORT_VALUE_TCP,
} from "@opentelemetry/semantic-conventions/incubating";
import { tracer } from "./tracing.ts";

/**
 * MCP calls in traces, by the OpenTelemetry MCP and GenAI semantic conventions (docs/operations.md,
 * Telemetry). Every attribute name comes from `@opentelemetry/semantic-conventions`, never a
 * hand-typed string. Nothing here is built unless the active span records: with no exporter
 * configured a call pays for one `getActiveSpan()`.
 */

/** What of an MCP message the conventions name (the parse of @gw/mcp has these fields). */
export type McpTraced = {
  readonly method: string | null;
  readonly tool: string | null;
  readonly name: string | null;
  readonly id: string | number | null;
  /** `params._meta.traceparent` / `tracestate` as the caller sent them (not yet validated). */
  readonly traceContext?: { readonly traceparent: string; readonly tracestate?: string } | undefined;
};

type Headers = Readonly<Record<string, string | string[] | undefined>>;

/** `{mcp.method.name} {target}`: the tool of a tools/call, the prompt of a prompts/get, else the method. */
export function mcpSpanName(m: McpTraced): string | null {
  if (m.method === null) return null;
  const target = m.method === "tools/call" || m.method === "prompts/get" ? m.name : null;
  return target ? `${m.method} ${target}` : m.method;
}

/**
 * The convention's attributes of one MCP call. `mcp.resource.uri` is left out on purpose: a
 * resource URI is the caller's text and may carry a token in its query, and spans carry no secrets.
 */
export function mcpAttributes(m: McpTraced, headers?: Headers): Attributes {
  const a: Attributes = {
    [ATTR_NETWORK_TRANSPORT]: NETWORK_TRANSPORT_VALUE_TCP,
    [ATTR_NETWORK_PROTOCOL_NAME]: "http",
  };
  if (m.method !== null) a[ATTR_MCP_METHOD_NAME] = m.method;
  if (m.id !== null) a[ATTR_JSONRPC_REQUEST_ID] = String(m.id);
  if (m.method === "tools/call" && m.tool !== null) {
    a[ATTR_GEN_AI_TOOL_NAME] = m.tool;
    a[ATTR_GEN_AI_OPERATION_NAME] = GEN_AI_OPERATION_NAME_VALUE_EXECUTE_TOOL;
  }
  if (m.method === "prompts/get" && m.name !== null) a[ATTR_GEN_AI_PROMPT_NAME] = m.name;
  const version = headers && single(headers["mcp-protocol-version"]);
  if (version) a[ATTR_MCP_PROTOCOL_VERSION] = version;
  const session = headers && single(headers["mcp-session-id"]);
  if (session) a[ATTR_MCP_SESSION_ID] = session;
  return a;
}

/**
 * The proxy's span for an MCP call (the request's server span) becomes the MCP call's span: named
 * `{mcp.method.name} {target}`, with the convention's attributes. When the request brought no
 * usable `traceparent` header but the message has a valid one in `params._meta`, the span is
 * re-parented into that trace (MCP's own propagation), so the upstream call and a transactional
 * call's queue and worker spans continue the caller's trace. The body is not touched.
 */
export function traceMcpCall(m: McpTraced, headers: Headers): void {
  const span = trace.getActiveSpan();
  if (!span?.isRecording()) return;
  if (m.traceContext && span instanceof ServerSpan && !span.hasRemoteParent) {
    const parent = callerContext(m.traceContext.traceparent, m.traceContext.tracestate);
    if (parent) span.reparent(parent);
  }
  const name = mcpSpanName(m);
  if (name) span.updateName(name);
  span.setAttributes(mcpAttributes(m, headers));
}

/**
 * The convention's attributes of an MCP call on the active span (the worker's process span), if
 * it records: the method and JSON-RPC id the stored call kept.
 */
export function annotateMcpSpan(method: string, id: string | number | null): void {
  const span = trace.getActiveSpan();
  if (span?.isRecording()) span.setAttributes(mcpAttributes({ method, tool: null, name: null, id }));
}

// W3C Trace Context, level 1: version-traceid-parentid-flags, lower-case hex. Versions above 00
// may append fields after a dash; version ff is invalid; all-zero ids are invalid.
const TRACEPARENT = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-[0-9a-f]{2}(-.*)?$/;
const ZERO_TRACE = "0".repeat(32);
const ZERO_SPAN = "0".repeat(16);
/** W3C: a tracestate longer than this may be dropped; it is, rather than parsed. */
const TRACESTATE_MAX = 512;

/** Whether `value` is a W3C `traceparent` a tracer may continue. */
export function isValidTraceparent(value: string): boolean {
  const m = TRACEPARENT.exec(value);
  if (!m) return false;
  const [, version, traceId, spanId, rest] = m;
  if (version === "ff" || (version === "00" && rest !== undefined)) return false;
  return traceId !== ZERO_TRACE && spanId !== ZERO_SPAN;
}

/** The remote context of a caller's `traceparent` (and `tracestate`), or null when it is not valid. */
function callerContext(traceparent: string, tracestate: string | undefined): Context | null {
  if (traceparent.length > 512 || !isValidTraceparent(traceparent)) return null;
  const carrier: Record<string, string> = { traceparent };
  if (tracestate !== undefined && tracestate.length <= TRACESTATE_MAX) carrier.tracestate = tracestate;
  const ctx = propagation.extract(ROOT_CONTEXT, carrier);
  const parent = trace.getSpanContext(ctx);
  return parent && isSpanContextValid(parent) ? ctx : null;
}

function single(v: string | string[] | undefined): string | undefined {
  return Array.isArray(v) ? v[0] : v;
}

/**
 * Starts a request's server span that can still be moved into another trace, because the trace a
 * call belongs to may only be known once its body is parsed (an MCP `params._meta`). When the span
 * does not record (no exporter configured) it is the tracer's own span, unwrapped.
 */
export function startMovableSpan(
  name: string,
  options: { kind: SpanKind; attributes: Attributes },
  parent: Context,
): Span {
  const span = tracer.startSpan(name, options, parent);
  return span.isRecording() ? new ServerSpan(span, name, options, parent) : span;
}

/**
 * Stands in the request's context for the span it currently is: children made after a move are
 * children of the moved span. The span it replaced is never ended, so it is never exported.
 */
class ServerSpan implements Span {
  #span: Span;
  readonly #name: string;
  readonly #kind: SpanKind;
  /** The attributes set so far, for the span that replaces this one. */
  readonly #attributes: Attributes;
  readonly #startTime = Date.now();
  /** Whether the caller's `traceparent` header gave the span its parent (then it never moves). */
  readonly hasRemoteParent: boolean;

  constructor(
    span: Span,
    name: string,
    options: { kind: SpanKind; attributes: Attributes },
    parent: Context,
  ) {
    this.#span = span;
    this.#name = name;
    this.#kind = options.kind;
    this.#attributes = { ...options.attributes };
    this.hasRemoteParent = trace.getSpanContext(parent)?.isRemote === true;
  }

  /** Starts the span again, with its name, kind, start and attributes so far, as a child of `parent`. */
  reparent(parent: Context): void {
    this.#span = tracer.startSpan(
      this.#name,
      { kind: this.#kind, attributes: this.#attributes, startTime: this.#startTime },
      parent,
    );
  }

  spanContext(): SpanContext {
    return this.#span.spanContext();
  }
  setAttribute(key: string, value: SpanAttributeValue): this {
    this.#attributes[key] = value;
    this.#span.setAttribute(key, value);
    return this;
  }
  setAttributes(attributes: SpanAttributes): this {
    Object.assign(this.#attributes, attributes);
    this.#span.setAttributes(attributes);
    return this;
  }
  addEvent(name: string, attributesOrStartTime?: SpanAttributes | TimeInput, startTime?: TimeInput): this {
    this.#span.addEvent(name, attributesOrStartTime, startTime);
    return this;
  }
  addLink(link: Link): this {
    this.#span.addLink(link);
    return this;
  }
  addLinks(links: Link[]): this {
    this.#span.addLinks(links);
    return this;
  }
  setStatus(status: SpanStatus): this {
    this.#span.setStatus(status);
    return this;
  }
  updateName(name: string): this {
    this.#span.updateName(name);
    return this;
  }
  end(endTime?: TimeInput): void {
    this.#span.end(endTime);
  }
  isRecording(): boolean {
    return this.#span.isRecording();
  }
  recordException(exception: Exception, time?: TimeInput): void {
    this.#span.recordException(exception, time);
  }
}
