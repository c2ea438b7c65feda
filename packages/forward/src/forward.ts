import { ERROR_CLASS } from "@gw/invocations";
import { notForwarded, type Settled, settleForForward, settlementFailed, UNSETTLED } from "@gw/payments";
import { recordAddedDuration, recordProxyCall, recordUpstreamDuration } from "@gw/telemetry";
import { Cancel, type Target } from "@gw/upstream";
import { type InjectedHeader, redactHeaders, redactSecret } from "@gw/vault";
import { answerReader, keptHeaders } from "./answer/collect.ts";
import { eachEventHead, eachEventSource } from "./answer/each-event.ts";
import { holdBody } from "./answer/hold.ts";
import { AnswerPlan, onAnswer } from "./answer/hooks.ts";
import { upstreamError } from "./answers.ts";
import {
  type AnswerSink,
  type BodySource,
  type ForwardCall,
  forwardCallOf,
  gatewayHeaders,
  type Local,
} from "./call.ts";
import { openCallCredential } from "./credential.ts";
import type { ForwardDeps } from "./deps.ts";
import { dialCollect, dialStream } from "./dial.ts";
import type { Forwarded } from "./forwarded.ts";
import type { Answer } from "./protocols/index.ts";
import { toolPaymentResponse, toolSettlementRefused } from "./protocols/mcp-x402.ts";
import { refuse } from "./refuse.ts";
import { relay } from "./relay.ts";
import { drain, keep, type Relay, relayCompleted, relayedFacts, relayFailed } from "./sink.ts";
import { Tap } from "./tap.ts";
import { chooseTarget } from "./target.ts";
import type { RelayedEvents } from "./virtual/relay-events.ts";
import { collectReading, type Reading, relayedEventsOf, unrelayed } from "./virtual/relay-reply.ts";
import { renewed, routeToMember, sessionLost } from "./virtual/routed.ts";
import { serveVirtual } from "./virtual/serve.ts";

/**
 * Step 9 of the proxy pipeline, the one definition both modes run: the streaming route hands it
 * a call it just admitted, the worker a call it just claimed, each with its own part (`Local`).
 * It chooses the target, opens the agent's credential (a routed call of a virtual MCP server: its
 * member's), settles when the call is priced (a call whose settlement failed is never forwarded), dials with the retry rules, runs the answer through the answer hooks and the tap,
 * and ends the invocation through the call's record port. `sink` decides what happens to the
 * answer: relayed to the caller as it arrives, or collected for the poll.
 *
 * A relayed call that fails before the upstream answered throws the caller's answer (402, 502,
 * 504) once its record is on its way.
 */
export async function forward(
  forwarded: Forwarded,
  local: Local,
  source: BodySource,
  sink: AnswerSink,
  deps: ForwardDeps,
): Promise<void> {
  const adapted = forwardCallOf(forwarded, local, deps);
  const call = adapted instanceof Promise ? await adapted : adapted;
  const tap = new Tap(call, source, sink.kind === "relay", deps.features.receipts, performance.now());
  let route = chooseTarget(call, source, deps.config);
  if (sink.kind === "collect") route = unrelayed(route);
  if (route.kind === "upstream" && route.member && call.server) {
    // A routed call of a virtual server, in its member's revision (routed.ts).
    const toMember = routeToMember(route, call.server, deps, sink.caller.log);
    route = toMember instanceof Promise ? await toMember : toMember;
  }
  let credential: InjectedHeader | undefined;
  if (route.kind === "upstream") {
    tap.routedAgentId = route.routedAgentId;
    // An agent without a credential opens none: not even a promise.
    const opened = route.call.credentialRef
      ? await openCallCredential(route.call, route.target.host, deps, sink.caller)
      : undefined;
    if (opened === "refused") return refuse(call, tap, sink, "credential", notForwarded(call.payment), deps);
    credential = opened;
    tap.secret = credential?.secret ?? "";
    if (call.guard) call.guard.secret = tap.secret;
  }
  // Settle-then-forward: the upstream is dialled only once the payment settled.
  const settled = call.payment
    ? await settleForForward(settleDeps(deps), call.tenantId, call.payment)
    : UNPAID;
  // An MCP tool payment's receipt goes in the result's `_meta` (mcp-x402.ts), not in a header.
  if (call.payment?.tool) call.paymentResponse = toolPaymentResponse(call.payment, settled);
  else Object.assign(call.responseHeaders, settled.headers);
  if (!settled.forward) return refuse(call, tap, sink, "unsettled", settled, deps);
  // A virtual MCP server answering from its members (docs/mcp.md): the one branch for it here.
  if (route.kind === "virtual") return serveVirtual(call, route, tap, settled, sink, deps);
  const { target, body } = route;
  // An older member's session that expired (404) is opened anew and the call sent once more.
  const again = "link" in route ? (status: 404) => renewed(route, status, deps, sink.caller.log) : null;
  if (sink.kind === "relay") {
    // An older member's requests to its client, relayed with gateway ids (relay-events.ts).
    const relaying = relayedEventsOf(call, route, deps.config);
    return relayCall(route.call, target, credential, tap, settled, sink, deps, body, again, relaying);
  }
  const reading = collectReading(route, deps, sink.caller.log);
  return collectCall(route.call, target, credential, tap, settled, deps, body, again, reading);
}

/** An unpriced call's settlement (what `settleForForward` answers for it), made once. */
const UNPAID: Settled & { headers: Record<string, string> } = Object.freeze({
  ...UNSETTLED,
  headers: Object.freeze({}),
});

function settleDeps(deps: ForwardDeps) {
  return {
    db: deps.store.db,
    keyring: deps.keyring,
    dispatcher: deps.dispatcher,
    timeoutMs: deps.config.GW_SETTLE_TIMEOUT_MS,
  };
}

/** Streaming: the answer relayed as it arrives, the record written in the background. */
async function relayCall(
  call: ForwardCall,
  target: Target,
  credential: InjectedHeader | undefined,
  tap: Tap,
  settled: Settled,
  sink: Relay,
  deps: ForwardDeps,
  body: Buffer | null,
  again: Again,
  relaying: RelayedEvents | null = null,
): Promise<void> {
  const { outgoing } = sink.caller;
  const cancel = new Cancel();
  // A caller that goes away before the answer ended cancels the upstream call (only then: an
  // abort after a clean finish would cost an exception and an event per call).
  outgoing.once("close", () => {
    if (!outgoing.writableFinished) cancel.abort();
  });
  // What the gateway adds to a streaming call: everything before the upstream is dialled.
  recordAddedDuration(performance.now() - sink.start, { mode: "streaming" });
  let opened = await dialStream(call, target, credential, body ?? tap.held ?? tap.upload, cancel, deps);
  if (again && opened.kind === "open" && opened.res.statusCode === 404) {
    // An older member's session expired: opened anew and the call sent once more; a second 404
    // (or no new session) is the caller's JSON-RPC error, the member's 404 never theirs.
    await opened.res.body.dump().catch(() => {});
    const renewedCall = await again(404);
    if (renewedCall) relaying?.renewed(renewedCall.headers);
    if (renewedCall) opened = await dialStream(renewedCall, target, credential, body, cancel, deps);
    if (!renewedCall || (opened.kind === "open" && opened.res.statusCode === 404)) {
      if (opened.kind === "open") await opened.res.body.dump().catch(() => {});
      relayFailed(call, tap, settled, sink, "unreachable", undefined);
      drain(sink);
      throw sessionLost(gatewayHeaders(call), call.rpcId);
    }
  }
  // The member's session id is the gateway's, never the caller's (whose session is the gateway's own).
  if (again && opened.kind === "open") delete opened.res.headers["mcp-session-id"];
  if (opened.kind === "failure") {
    const failure = cancel.aborted ? "cancelled" : opened.failure;
    relayFailed(call, tap, settled, sink, failure, undefined);
    drain(sink);
    throw upstreamError(failure, gatewayHeaders(call));
  }
  const { res } = opened;
  let head: Answer = { status: res.statusCode, headers: res.headers, body: null };
  // The answer hooks (hooks.ts): null for every answer no feature asked for.
  const opening = AnswerPlan.open(deps.answerHooks?.[call.protocol], call, head, tap.held);
  const plan = opening instanceof Promise ? await opening : opening;
  if (plan?.hold) {
    const held = await holdBody(res, plan.maxBytes, plan.endsAt);
    if (held.kind === "failure") {
      const failure = cancel.aborted ? "cancelled" : held.failure;
      relayFailed(call, tap, settled, sink, failure, undefined);
      throw upstreamError(failure, gatewayHeaders(call));
    }
    head = await plan.reshape({ ...head, body: held.body }, held.whole);
  }
  // An SSE answer judged event by event (A2A under answer rules, an older member's requests to its
  // client): relayed as the transform makes it.
  const each = plan?.each ?? (plan?.hold ? null : (relaying?.ifStream(res.headers) ?? null));
  if (each) head = eachEventHead(head);
  const own = gatewayHeaders(call);
  own["x-request-id"] = sink.caller.requestId;
  tap.learner = call.speaks.learn(head, call.rpcMethod);
  const relayed = await relay(each ? eachEventSource(res, each) : res, head, outgoing, own, {
    t0: tap.t0,
    capture: tap.respCapture,
    secret: tap.secret,
    digest: tap.respDigest,
    tee: plan?.hold ? null : plan,
    learn: tap.learner,
  });
  plan?.finish(relayed.ended === "end");
  // A standalone GET stream is ended by the client: that is its normal end, not a cancellation.
  const closedNormally = relayed.ended === "client_closed" && call.method === "GET";
  if (relayed.ended !== "end" && !closedNormally) {
    return relayFailed(call, tap, settled, sink, relayed.failure ?? "unreachable", relayed);
  }
  relayCompleted(call, tap, settled, sink, relayed);
}

/** Transactional: the answer read whole (capped), redacted, and stored for the poll with the record. */
async function collectCall(
  call: ForwardCall,
  target: Target,
  credential: InjectedHeader | undefined,
  tap: Tap,
  settled: Settled,
  deps: ForwardDeps,
  sent: Buffer | null,
  again: Again,
  reading: Reading = null,
): Promise<void> {
  const payload = sent ?? tap.held ?? EMPTY;
  const read = (c: ForwardCall) => reading?.(c) ?? answerReader(call);
  let result = await dialCollect(call, target, credential, payload, read(call), deps);
  if (again && result.kind === "answer" && result.status === 404) {
    const renewedCall = await again(404);
    if (renewedCall)
      result = await dialCollect(renewedCall, target, credential, payload, read(renewedCall), deps);
    if (!renewedCall || (result.kind === "answer" && result.status === 404)) {
      return call.record.fail("unreachable", tap.collectedFacts({ attempts: 2 }, settled.facts(false)));
    }
  }
  if (again && result.kind === "answer") delete result.headers["mcp-session-id"];
  recordUpstreamDuration(tap.elapsed(), { mode: "transactional" });
  if (result.kind === "failure") {
    return call.record.fail(
      result.failure,
      tap.collectedFacts({ attempts: result.attempts }, settled.facts(false)),
    );
  }
  const { attempts, status } = result;
  if (!result.body.ok) {
    const facts = tap.collectedFacts({ attempts, upstreamStatus: status }, settled.facts(false));
    return call.record.fail(result.body.failure, facts);
  }
  const answer = await onAnswer(
    deps.answerHooks?.[call.protocol],
    call,
    // A collected event stream was turned into its JSON-RPC response: the hooks read it as that.
    {
      status,
      headers: { ...result.headers, "content-type": result.body.contentType ?? undefined },
      body: result.body.body,
    },
    tap.held,
  );
  // An upstream that reflects the injected secret must not get it stored (docs/credentials.md).
  const body = Buffer.from(redactSecret(answer.body ?? EMPTY, tap.secret));
  tap.learner = call.speaks.learn(answer, call.rpcMethod);
  tap.learner?.add(body);
  const facts = tap.collectedFacts(
    { attempts, upstreamStatus: answer.status, body },
    settled.facts(answer.status < 400),
  );
  return call.record.complete(answer.status, facts, {
    result: {
      status: answer.status,
      contentType: result.body.contentType,
      headers: keptHeaders(redactHeaders(answer.headers, tap.secret)),
      body,
      expiresAt: new Date(Date.now() + deps.config.GW_RESULT_TTL_SECONDS * 1000),
    },
    ...tap.digests(body),
  });
}

const EMPTY = Buffer.alloc(0);

/** How a routed call on an older member's session is sent again after a 404 (routed.ts); null for every other call. */
type Again = ((status: 404) => Promise<ForwardCall | null>) | null;
