import type { Failure } from "@gw/invocations";
import type { Settled } from "@gw/payments";
import {
  ERRORS,
  type FanOut,
  fanOut,
  type MemberPort,
  mergeListen,
  notifyAll,
  type OwnAnswer,
  REVISION,
  requestId,
  rpcError,
  SEARCH_MODE_TOOLS,
  SERVER_INFO_KEY,
  searchResult,
  shapedFor,
} from "@gw/virtual";
import { onAnswer } from "../answer/hooks.ts";
import { upstreamError } from "../answers.ts";
import { type AnswerSink, type ForwardCall, gatewayHeaders } from "../call.ts";
import type { ForwardDeps } from "../deps.ts";
import { drain, type Relay, relayCompleted, relayFailed } from "../sink.ts";
import type { Tap } from "../tap.ts";
import type { Route } from "../target.ts";
import { memberPort, openListens } from "./member-port.ts";
import { membersList } from "./members-list.ts";
import { sessionsOf } from "./session-key.ts";

type Served = Extract<Route, { kind: "virtual" }>;
const JSON_TYPE = "application/json";
const EMPTY = Buffer.alloc(0);
const SESSION_LOST = "Member server unavailable: its session expired again after it was opened anew";

/**
 * A virtual MCP server's request that no single member serves as it is (docs/mcp.md, Virtual MCP
 * servers): answered by the gateway itself (a refusal of the revision), from several members
 * (discover, the merged lists, resources/read, a resource completion, a notification), or as one
 * stream merged from theirs (`subscriptions/listen`). The answer goes through the answer hooks and
 * out through the same sink and record as an upstream's. A fan-out that no member answered fails
 * like any upstream call (502/504 on the stream, `failed` for the poll).
 */
export async function serveVirtual(
  call: ForwardCall,
  route: Served,
  tap: Tap,
  settled: Settled,
  sink: AnswerSink,
  deps: ForwardDeps,
): Promise<void> {
  const { plan, server } = route;
  if (route.failure) {
    tap.routedAgentId = route.failure.routedAgentId;
    return failed(call, tap, settled, sink, route.failure.reason);
  }
  const client = plan.kind === "fanout" || plan.kind === "routed" ? plan.client : null;
  const port = memberPort(call, deps, sink.caller.log, client);
  if (plan.kind === "listen") {
    if (sink.kind === "relay") return listen(call, route, tap, settled, sink, deps);
    // A subscription is a stream; the transactional path stores one answer.
    const refusal = rpcError(
      400,
      requestId(plan.message),
      ERRORS.invalidRequest,
      "subscriptions/listen needs the streaming path",
    );
    return deliver(call, tap, settled, sink, deps, {
      status: refusal.status,
      body: encode(refusal),
      reached: false,
    });
  }
  if (plan.kind === "search") return searched(call, route, tap, settled, sink, deps);
  if (plan.kind === "notify") {
    if (plan.members) await notifyAll(server, plan.body, "notification", port);
    return deliver(call, tap, settled, sink, deps, { status: 202, body: null, reached: plan.members });
  }
  let outcome: FanOut;
  if (plan.kind === "own") outcome = { kind: "answer", answer: plan.answer, servedBy: null };
  else if (plan.kind === "routed") outcome = await routedOnce(call, plan, port);
  else outcome = await fanOut(server, plan.method, plan.message, port, plan.client);
  if (outcome.kind === "failure") return failed(call, tap, settled, sink, outcome.reason);
  tap.routedAgentId = outcome.servedBy ?? route.routedAgentId ?? null;
  const { answer } = outcome;
  // Answers in the caller's revision's shapes (docs/mcp.md, Older revisions).
  const message = plan.kind === "own" ? answer.message : shapedFor(answer.message, client ?? REVISION);
  const headers: Record<string, string> = {};
  if (plan.kind === "fanout" && plan.method === "initialize" && client !== null && answer.status === 200) {
    // The older client's session: signed, verified by any replica, nothing stored.
    headers["mcp-session-id"] = sessionsOf(deps.config).issue({
      tenantId: call.tenantId,
      agentId: call.agentId,
      revision: client,
    });
  }
  return deliver(call, tap, settled, sink, deps, {
    status: answer.status,
    // 204: an older client's session ended, no body.
    body: answer.status === 204 ? null : Buffer.from(JSON.stringify(message)),
    headers,
    // The gateway's own answers, and an older client's initialize (the members were asked their
    // capabilities, the caller's request itself went nowhere), reached no upstream.
    reached: plan.kind !== "own" && !(plan.kind === "fanout" && plan.method === "initialize"),
  });
}

/**
 * A routed call whose member and caller speak different revisions: the member asked in its own
 * (`memberPort`), its answer re-shaped for the caller; no answer fails like an upstream's.
 */
async function routedOnce(
  call: ForwardCall,
  plan: Extract<Served["plan"], { kind: "routed" }>,
  port: MemberPort,
): Promise<FanOut> {
  const reply = await port.call(plan.member, plan.body, call.rpcMethod ?? "tools/call");
  if (reply.kind === "failure" && reply.reason === "session_lost") {
    const lost = rpcError(502, call.rpcId, ERRORS.internal, SESSION_LOST);
    return { kind: "answer", answer: lost, servedBy: plan.member.agentId };
  }
  if (reply.kind === "failure") {
    port.failed(plan.member, call.rpcMethod ?? "tools/call", reply.reason);
    return { kind: "failure", reason: reply.reason === "timeout" ? "timeout" : "unreachable" };
  }
  if (!reply.message) return { kind: "failure", reason: "unreachable" };
  return {
    kind: "answer",
    answer: { status: reply.status, message: reply.message },
    servedBy: plan.member.agentId,
  };
}

function encode(answer: OwnAnswer): Buffer {
  return Buffer.from(JSON.stringify(answer.message));
}

/**
 * The virtual server's answer, through the answer hooks (where per-caller tool filtering reshapes
 * a merged `tools/list` like an upstream's) and out: written to the caller, or stored for the poll.
 * `reached`: whether the caller's request reached a member; an answer the gateway gave without
 * one is recorded with `upstream_status` null (docs/mcp.md, Virtual MCP servers).
 */
async function deliver(
  call: ForwardCall,
  tap: Tap,
  settled: Settled,
  sink: AnswerSink,
  deps: ForwardDeps,
  own: {
    status: number;
    body: Buffer | null;
    headers?: Record<string, string>;
    reached: boolean;
    /** false: the answer hooks do not see it (a search-mode list is not the members' list to learn). */
    hooks?: boolean;
  },
): Promise<void> {
  const headers: Record<string, string> = own.body ? { "content-type": JSON_TYPE } : {};
  const answer = await onAnswer(
    own.hooks === false ? undefined : deps.answerHooks?.[call.protocol],
    call,
    { status: own.status, headers, body: own.body },
    tap.held,
  );
  const body = answer.body ?? EMPTY;
  const ok = answer.status < 400;
  const upstreamStatus = own.reached ? answer.status : null;
  if (sink.kind === "collect") {
    const facts = tap.collectedFacts({ attempts: 1, upstreamStatus, body }, settled.facts(ok));
    return call.record.complete(answer.status, facts, {
      result: {
        status: answer.status,
        contentType: body.length > 0 ? JSON_TYPE : null,
        headers: own.headers && Object.keys(own.headers).length > 0 ? own.headers : null,
        body,
        expiresAt: new Date(Date.now() + deps.config.GW_RESULT_TTL_SECONDS * 1000),
      },
      ...tap.digests(body),
    });
  }
  const { outgoing } = sink.caller;
  const head: Record<string, string> = { ...gatewayHeaders(call), "x-request-id": sink.caller.requestId };
  if (body.length > 0) head["content-type"] = JSON_TYPE;
  Object.assign(head, own.headers);
  head["content-length"] = String(body.length);
  tap.respCapture?.add(body);
  tap.respDigest?.update(body);
  const ended = await new Promise<boolean>((resolve) => {
    outgoing.once("close", () => resolve(outgoing.writableFinished));
    outgoing.writeHead(answer.status, head);
    outgoing.end(body, () => resolve(true));
  });
  const relayed = {
    status: answer.status,
    upstreamStatus,
    ttftMs: tap.elapsed(),
    respSize: body.length,
    ended: ended ? ("end" as const) : ("client_closed" as const),
    failure: ended ? null : ("cancelled" as const),
  };
  if (!ended) return relayFailed(call, tap, settled, sink, "cancelled", relayed);
  relayCompleted(call, tap, settled, sink, relayed);
}

/** No member answered a fan-out: the call fails as an upstream call that got no answer would. */
async function failed(
  call: ForwardCall,
  tap: Tap,
  settled: Settled,
  sink: AnswerSink,
  failure: Failure,
): Promise<void> {
  if (sink.kind === "collect") {
    return call.record.fail(failure, tap.collectedFacts({ attempts: 1 }, settled.facts(false)));
  }
  relayFailed(call, tap, settled, sink, failure, undefined);
  drain(sink);
  throw upstreamError(failure, gatewayHeaders(call));
}

/**
 * `subscriptions/listen`: the members' streams merged into one SSE stream to the caller, with
 * backpressure; it ends when every member stream ended or the caller went away (a listen stream
 * the caller closes is its normal end, like a standalone GET stream). When no member opened a
 * stream, the first member's answer goes back as it is, or the call fails like an upstream's.
 */
async function listen(
  call: ForwardCall,
  route: Served,
  tap: Tap,
  settled: Settled,
  sink: Relay,
  deps: ForwardDeps,
): Promise<void> {
  const { server, plan } = route;
  if (plan.kind !== "listen") return;
  const port = memberPort(call, deps, sink.caller.log);
  const body = Buffer.from(JSON.stringify(plan.message));
  const opened = await openListens(call, server.members, body, port, deps, sink.caller.log);
  if (opened.streams.length === 0) {
    const [answer] = opened.answers;
    if (answer)
      return deliver(call, tap, settled, sink, deps, {
        status: answer.status,
        body: encode(answer),
        reached: true,
      });
    return failed(call, tap, settled, sink, "unreachable");
  }
  const merged = mergeListen(opened.streams, plan.message);
  const { outgoing } = sink.caller;
  outgoing.once("close", () => merged.close());
  outgoing.writeHead(200, {
    ...gatewayHeaders(call),
    "x-request-id": sink.caller.requestId,
    "content-type": "text/event-stream",
    "cache-control": "no-cache, no-transform",
  });
  outgoing.flushHeaders();
  let ttftMs: number | null = null;
  let respSize = 0;
  for await (const event of merged.events) {
    if (outgoing.destroyed) break;
    const chunk = Buffer.from(event);
    ttftMs ??= tap.elapsed();
    respSize += chunk.length;
    tap.respCapture?.add(chunk);
    tap.respDigest?.update(chunk);
    if (!outgoing.write(chunk)) await new Promise((r) => outgoing.once("drain", r).once("close", r));
  }
  merged.close();
  if (!outgoing.destroyed) await new Promise<void>((r) => outgoing.end(r));
  relayCompleted(call, tap, settled, sink, {
    status: 200,
    upstreamStatus: 200,
    ttftMs,
    respSize,
    ended: "end",
    failure: null,
  });
}

/**
 * A search-mode virtual server's `tools/list` and `search_tools` (docs/mcp.md, Tool search on
 * virtual servers), answered by the gateway from the tool catalog: the list holds the gateway's
 * two tools this caller may call (never learned as the members' tools); a search answers the best
 * matches the caller may call, and goes through the answer hooks like any tools/call answer (the
 * answer guard reads it). Members never learned are listed once first, on the gateway's behalf.
 */
async function searched(
  call: ForwardCall,
  route: Served,
  tap: Tap,
  settled: Settled,
  sink: AnswerSink,
  deps: ForwardDeps,
): Promise<void> {
  const { plan, server } = route;
  if (plan.kind !== "search") return;
  const id = requestId(plan.message);
  const search = deps.toolSearch;
  let answer: OwnAnswer;
  if (!search) answer = rpcError(200, id, ERRORS.internal, "Internal error: tool search is not available");
  else if (plan.search === null) {
    const own = await search.ownTools(call);
    answer = {
      status: 200,
      message: {
        jsonrpc: "2.0",
        id,
        result: {
          tools: SEARCH_MODE_TOOLS.filter((t) => own.has(t.name as string)),
          // Per caller: never shared, and asked again each time (the catalog behind it moves).
          resultType: "complete",
          ttlMs: 0,
          cacheScope: "private",
          _meta: { [SERVER_INFO_KEY]: { name: server.name, version: server.version } },
        },
      },
    };
  } else {
    const listPage = membersList(call, route, deps, sink.caller.log);
    answer = await search.search(call, server, plan.search, listPage).then(
      (tools) => searchResult(id, tools),
      () => rpcError(200, id, ERRORS.internal, "Internal error: the tool catalog could not be read"),
    );
  }
  const message = shapedFor(answer.message, plan.client ?? REVISION);
  return deliver(call, tap, settled, sink, deps, {
    status: answer.status,
    body: Buffer.from(JSON.stringify(message)),
    reached: false,
    hooks: plan.search !== null,
  });
}
