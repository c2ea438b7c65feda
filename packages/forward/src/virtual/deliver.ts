import type { Failure } from "@gw/invocations";
import type { Settled } from "@gw/payments";
import type { OwnAnswer } from "@gw/virtual";
import { onAnswer } from "../answer/hooks.ts";
import { upstreamError } from "../answers.ts";
import { type AnswerSink, type ForwardCall, gatewayHeaders } from "../call.ts";
import type { ForwardDeps } from "../deps.ts";
import { drain, relayCompleted, relayFailed } from "../sink.ts";
import type { Tap } from "../tap.ts";

const JSON_TYPE = "application/json";
const EMPTY = Buffer.alloc(0);

export function encode(answer: OwnAnswer): Buffer {
  return Buffer.from(JSON.stringify(answer.message));
}

export /**
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

export /** No member answered a fan-out: the call fails as an upstream call that got no answer would. */
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
