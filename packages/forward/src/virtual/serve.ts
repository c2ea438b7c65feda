import { isRecord } from "@gw/jsonrpc";
import type { Settled } from "@gw/payments";
import {
  ERRORS,
  type FanOut,
  fanOut,
  type MemberPort,
  notifyAll,
  REVISION,
  relaysOf,
  requestId,
  rpcError,
  shapedFor,
} from "@gw/virtual";
import type { AnswerSink, ForwardCall } from "../call.ts";
import type { ForwardDeps } from "../deps.ts";
import type { Tap } from "../tap.ts";
import type { Route } from "../target.ts";
import { deliver, encode, failed } from "./deliver.ts";
import { listen } from "./listen-stream.ts";
import { memberPort } from "./member-port.ts";
import { serveReply } from "./relay-reply.ts";
import { relayStream } from "./relay-stream.ts";
import { searched } from "./searched.ts";
import { sessionsOf } from "./session-key.ts";
import { servedTask } from "./tasks.ts";

type Served = Extract<Route, { kind: "virtual" }>;
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
  if (plan.kind === "reply") return serveReply(call, plan, tap, settled, sink, deps);
  // GET is served on the streaming path only (step 2).
  if (plan.kind === "stream") {
    if (sink.kind === "relay") return relayStream(call, plan, tap, settled, sink, deps, server.members);
    return failed(call, tap, settled, sink, "unreachable");
  }
  if (plan.kind === "task") return servedTask(call, route, tap, settled, sink, deps);
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
      // The client capabilities relayed to this session (docs/mcp.md, Server-initiated messages).
      relays: relaysOf(isRecord(plan.message.params) ? plan.message.params.capabilities : undefined),
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
