import { randomUUID } from "node:crypto";
import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from "node:http";
import { invalid } from "@gw/core";
import { type Logger, startMovableSpan } from "@gw/telemetry";
import {
  type Context,
  context,
  propagation,
  type Span,
  SpanKind,
  SpanStatusCode,
  trace,
} from "@opentelemetry/api";
import { errorAnswer } from "./errors.ts";
import { hasNul } from "./text.ts";

const REQUEST_ID_RE = /^[\w.-]{1,128}$/;

/** The caller's `X-Request-Id` when it is a sane token, else a fresh one. */
export function requestIdOf(given: string | undefined): string {
  return given && REQUEST_ID_RE.test(given) ? given : randomUUID();
}

/**
 * One server span per request, child of the caller's traceparent when it sent one; upstream calls
 * made while handling it become its children (run them inside the returned context). No headers or
 * bodies are recorded. Without a traceparent header the span may still join the caller's trace
 * that an MCP message names in `params._meta` (`traceMcpCall` of @gw/telemetry). `route`, when
 * known up front, names the span at once (an MCP call renames it).
 */
export function startServerSpan(
  method: string,
  requestId: string,
  headers: IncomingHttpHeaders,
  route?: string,
): { span: Span; ctx: Context } {
  const parent = propagation.extract(context.active(), headers);
  const attributes: Record<string, string> = { "http.request.method": method, "gw.request_id": requestId };
  if (route) attributes["http.route"] = route;
  const span = startMovableSpan(
    route ? `${method} ${route}` : method,
    { kind: SpanKind.SERVER, attributes },
    parent,
  );
  return { span, ctx: trace.setSpan(parent, span) };
}

/** Ends a server span with its route and status (an error status from 500 on). */
export function endServerSpan(span: Span, method: string, route: string | undefined, status: number): void {
  if (route) {
    span.updateName(`${method} ${route}`);
    span.setAttribute("http.route", route);
  }
  span.setAttribute("http.response.status_code", status);
  if (status >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
  span.end();
}

/** The NUL rule (see text.ts) for every query parameter: 400 before any handler runs. */
export function checkQuery(url: string): void {
  const q = url.indexOf("?");
  if (q < 0) return;
  for (const [name, value] of new URLSearchParams(url.slice(q + 1))) {
    if (hasNul(name) || hasNul(value)) {
      throw invalid(`${hasNul(name) ? "query parameter names" : name} must not contain NUL characters`);
    }
  }
}

/** A request served straight on Node's objects, outside Hono (the proxy's hot routes). */
export type Exchange = {
  readonly incoming: IncomingMessage;
  readonly outgoing: ServerResponse;
  readonly method: string;
  /** The path without its query. */
  readonly path: string;
  readonly requestId: string;
  /** The request's child logger, built on first use (a call that logs nothing never builds it). */
  readonly log: Logger;
  /** Fields the handler adds to the request's one access-log line (e.g. the invocation id). */
  readonly fields: Record<string, unknown>;
};

/**
 * Serves one request the way the base app (app.ts) serves its own: request id, server span, query
 * rule, the one error mapping, one access-log line, on the raw Node request and response so the hot
 * routes pay for no framework. `handle` answers the caller itself; the access line is written when
 * it settled (for a stream: when the stream ended).
 */
export function serveExchange(
  logger: Logger,
  incoming: IncomingMessage,
  outgoing: ServerResponse,
  route: string,
  handle: (x: Exchange) => Promise<void>,
): void {
  void serve(performance.now(), new NodeExchange(logger, incoming, outgoing), route, handle);
}

/**
 * One request's exchange, a class so that a request pays for one object: its logger is built on
 * first use by a getter of the prototype, not by a closure of its own.
 */
class NodeExchange implements Exchange {
  readonly method: string;
  readonly path: string;
  readonly requestId: string;
  readonly fields: Record<string, unknown> = {};
  #log: Logger | undefined;

  constructor(
    readonly logger: Logger,
    readonly incoming: IncomingMessage,
    readonly outgoing: ServerResponse,
  ) {
    const url = incoming.url ?? "/";
    const q = url.indexOf("?");
    this.method = incoming.method ?? "GET";
    this.path = q < 0 ? url : url.slice(0, q);
    this.requestId = requestIdOf(incoming.headers["x-request-id"] as string | undefined);
  }

  get log(): Logger {
    this.#log ??= this.logger.child({ request_id: this.requestId });
    return this.#log;
  }
}

async function serve(
  start: number,
  x: NodeExchange,
  route: string,
  handle: (x: Exchange) => Promise<void>,
): Promise<void> {
  const { method, outgoing, logger } = x;
  const { span, ctx } = startServerSpan(method, x.requestId, x.incoming.headers, route);
  try {
    await context.with(ctx, handled, undefined, x, handle);
  } catch (err) {
    answerError(x, err);
  }
  // Named by its route from the start, so an MCP call's name (`tools/call get_weather`) stays.
  endServerSpan(span, method, undefined, outgoing.statusCode);
  // Nothing of the line is built when `info` is off.
  if (!logger.isLevelEnabled("info")) return;
  const ms = Math.round((performance.now() - start) * 10) / 10;
  x.log.info({ method, path: x.path, status: outgoing.statusCode, ...x.fields, ms }, "request");
}

/** The query rule, then the handler, inside the request's span. */
function handled(x: NodeExchange, handle: (x: Exchange) => Promise<void>): Promise<void> {
  checkQuery(x.incoming.url ?? "/");
  return handle(x);
}

/** Writes a JSON answer with the request id (the hot routes' `c.json`). */
export function answerJson(
  x: Exchange,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  const text = JSON.stringify(body);
  x.outgoing.writeHead(status, {
    ...headers,
    "content-type": "application/json",
    "content-length": Buffer.byteLength(text),
    "x-request-id": x.requestId,
  });
  x.outgoing.end(text);
}

function answerError(x: Exchange, err: unknown): void {
  const { status, headers, body } = errorAnswer(err, x.log);
  // An answer already under way cannot change its status: cut it, the caller sees it was not whole.
  if (x.outgoing.headersSent) {
    x.outgoing.destroy();
    return;
  }
  try {
    if (body !== null) answerJson(x, status, body, headers);
    else {
      x.outgoing.writeHead(status, { ...headers, "content-length": 0, "x-request-id": x.requestId });
      x.outgoing.end();
    }
  } catch {
    x.outgoing.destroy();
  }
}
