import { ERROR_CLASS, type Facts, type Failure, outcomeOfStatus } from "@gw/invocations";
import type { Settled } from "@gw/payments";
import { recordProxyCall, recordUpstreamDuration } from "@gw/telemetry";
import type { AnswerSink, ForwardCall } from "./call.ts";
import type { Relayed } from "./relay.ts";
import type { Tap } from "./tap.ts";

export type Relay = Extract<AnswerSink, { kind: "relay" }>;

/** A relayed call's record is written off the critical path; graceful shutdown waits for it. */
export function keep(sink: Relay, call: ForwardCall, write: Promise<void>): void {
  sink.track(
    write.catch((e: unknown) => {
      sink.caller.log.error(
        { invocation_id: call.invocationId, err: e instanceof Error ? e.name : "error" },
        "could not record stream outcome",
      );
    }),
  );
}

/** The caller may still be sending: let Node drain the rest so the error reaches them. */
export function drain(sink: Relay): void {
  const { incoming } = sink.caller;
  if (!incoming.complete) incoming.resume();
}

/** A relayed call's facts, with the upstream time it took (a metric of every relayed call). */
export function relayedFacts(tap: Tap, relayed: Relayed | undefined, paid: Facts): Facts {
  recordUpstreamDuration(tap.elapsed(), { mode: "streaming" });
  return tap.relayedFacts(relayed, paid);
}

/** A relayed call that was answered: the metric, and its record completed in the background. */
export function relayCompleted(
  call: ForwardCall,
  tap: Tap,
  settled: Settled,
  sink: Relay,
  relayed: Relayed,
): void {
  const { status, errorClass } = outcomeOfStatus(relayed.status);
  recordProxyCall({ mode: "streaming", outcome: status, errorClass: errorClass ?? "none" });
  const facts = relayedFacts(tap, relayed, settled.facts(status === "succeeded"));
  keep(sink, call, call.record.complete(relayed.status, facts, tap.digests()));
}

/** A relayed call that failed (`relayed`: what was delivered before it did, if anything). */
export function relayFailed(
  call: ForwardCall,
  tap: Tap,
  settled: Settled,
  sink: Relay,
  failure: Failure,
  relayed: Relayed | undefined,
): void {
  recordProxyCall({ mode: "streaming", outcome: "failed", errorClass: ERROR_CLASS[failure] });
  const facts = relayedFacts(tap, relayed, settled.facts(false));
  keep(sink, call, call.record.fail(failure, facts, relayed ? tap.digests() : undefined));
}
