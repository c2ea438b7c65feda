import { LIMITS } from "@gw/core";
import { isRecord, parseJson, SseSplitter, sseBlocks } from "@gw/jsonrpc";
import type { Settled } from "@gw/payments";
import type { Logger } from "@gw/telemetry";
import type { OpenAnswer } from "@gw/upstream";
import { ERRORS, isOlderRevision, type Member, type ReplyPlan, rpcError } from "@gw/virtual";
import { answerReader, type ReadBody } from "../answer/collect.ts";
import type { AnswerSink, ForwardCall } from "../call.ts";
import { openCallCredential } from "../credential.ts";
import type { ForwardDeps } from "../deps.ts";
import { dialCollect } from "../dial.ts";
import type { Tap } from "../tap.ts";
import { memberCall, type Route } from "../target.ts";
import { deliver, encode, failed } from "./deliver.ts";
import { linkedCall } from "./member-adapt.ts";
import type { Link } from "./member-link.ts";
import { RELAYED_REQUESTS_MAX, RelayedEvents } from "./relay-events.ts";
import type { SessionRoute } from "./routed.ts";
import { memberIdsOf, type SessionKeyConfig } from "./session-key.ts";

/**
 * The transform of a routed call's answer relayed from an older member to an older client
 * (docs/mcp.md, Server-initiated messages): the member's requests get gateway ids. Null for any
 * other route (nothing changes on those answers).
 */
export function relayedEventsOf(
  call: ForwardCall,
  route: Route,
  config: SessionKeyConfig,
): RelayedEvents | null {
  if (route.kind !== "upstream" || !("link" in route) || !route.member) return null;
  const { member } = route;
  const { link } = route as SessionRoute;
  return new RelayedEvents(
    {
      tenantId: call.tenantId,
      agentId: call.agentId,
      member: member.agentId,
      memberSession: link.sessionId ?? "",
    },
    memberIdsOf(config),
  );
}

/**
 * An older client's answer to a relayed request: sent to the member that asked, on the member
 * session the request came on, with the member's own id, from whichever replica received it
 * (nothing is stored: the gateway id names all of it). The client gets 202 once the member took
 * it; a member session that is gone is the client's unknown session (404); a member that cannot
 * be reached fails as an upstream call (502/504); anything else the member answers is its own
 * failure, a JSON-RPC error (502) that names no member detail.
 */
export async function serveReply(
  call: ForwardCall,
  plan: ReplyPlan,
  tap: Tap,
  settled: Settled,
  sink: AnswerSink,
  deps: ForwardDeps,
): Promise<void> {
  const { member } = plan;
  tap.routedAgentId = member.agentId;
  const revision = member.revision && isOlderRevision(member.revision) ? member.revision : plan.client;
  const link: Link = {
    kind: "session",
    revision,
    sessionId: plan.memberSession === "" ? null : plan.memberSession,
    init: {},
  };
  const mcall = linkedCall(memberCall(call, member, null), link, "response");
  const credential = await openCallCredential(mcall, member.target.host, deps, { log: sink.caller.log });
  if (credential === "refused") return failed(call, tap, settled, sink, "credential");
  const result = await dialCollect(mcall, member.target, credential, plan.body, answerReader(mcall), deps);
  if (result.kind === "failure") return failed(call, tap, settled, sink, result.failure);
  if (result.status >= 200 && result.status < 300)
    return deliver(call, tap, settled, sink, deps, { status: 202, body: null, reached: true });
  const answer =
    result.status === 404
      ? rpcError(404, null, SESSION_NOT_FOUND, "Session not found")
      : rpcError(502, null, ERRORS.internal, "Member server did not accept the response");
  return deliver(call, tap, settled, sink, deps, {
    status: answer.status,
    body: encode(answer),
    reached: true,
  });
}

/** The code the official SDKs answer an unknown session with. */
const SESSION_NOT_FOUND = -32001;

/** How a collected call's answer is read, per call as sent (a renewed session's too); null: as usual. */
export type Reading = ((call: ForwardCall) => (answer: OpenAnswer) => Promise<ReadBody>) | null;

/** The reading of a routed call's collected answer from an older member (`refusingReader`); null for any other. */
export function collectReading(route: Route, deps: ForwardDeps, log: Logger): Reading {
  if (route.kind !== "upstream" || !("link" in route) || !route.member) return null;
  const { member } = route;
  return (c) => refusingReader(c, member, deps, answerReader(c), log);
}

/** A collected answer cannot carry a member's requests to the client: its member session relays nothing. */
export function unrelayed(route: Route): Route {
  if (route.kind !== "upstream" || !route.call.relays) return route;
  const { relays: _none, ...call } = route.call;
  return { ...route, call };
}

/**
 * A collected answer of an older member (the transactional path, where nothing reaches the client
 * before the end): every request the member sends on it is answered at once with a JSON-RPC error
 * (`-32601`, as a client without that capability answers), so a member that asks anyway does not
 * wait for an answer that cannot come. The events pass on to `read` unchanged. `call` is the call
 * as the member received it (its session's headers).
 */
export function refusingReader<T>(
  call: ForwardCall,
  member: Member,
  deps: ForwardDeps,
  read: (answer: OpenAnswer) => Promise<T>,
  log: Logger,
): (answer: OpenAnswer) => Promise<T> {
  const refuse = (id: string | number) => {
    const body = Buffer.from(
      JSON.stringify({
        jsonrpc: "2.0",
        id,
        error: { code: ERRORS.methodNotFound, message: "Method not found" },
      }),
    );
    const mcall: ForwardCall = { ...call, rpcMethod: null, rpcId: null };
    void openCallCredential(mcall, member.target.host, deps, { log })
      .then((credential) =>
        credential === "refused"
          ? null
          : dialCollect(mcall, member.target, credential, body, answerReader(mcall), deps),
      )
      .catch(() => null);
  };
  return (answer) => read({ ...answer, body: watched(answer.body, refuse) as unknown as OpenAnswer["body"] });
}

/** The body as it is, each member request in it refused (`refuse`) as it passes; at most so many. */
async function* watched(body: AsyncIterable<Buffer>, refuse: (id: string | number) => void) {
  const split = new SseSplitter(LIMITS.virtualMemberAnswerMaxBytes);
  let refused = 0;
  for await (const chunk of body) {
    if (!split.over && refused < RELAYED_REQUESTS_MAX) {
      for (const event of split.push(chunk)) {
        if (event.indexOf('"method"') === -1) continue;
        const data = sseBlocks(event.toString("utf8")).find((b) => b.data !== null)?.data;
        const msg = data ? parseJson(data) : null;
        if (!isRecord(msg) || typeof msg.method !== "string") continue;
        if (typeof msg.id !== "string" && typeof msg.id !== "number") continue;
        refused++;
        refuse(msg.id);
      }
    }
    yield chunk;
  }
}
