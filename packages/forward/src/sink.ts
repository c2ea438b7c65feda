import type { Facts } from "@gw/invocations";
import { recordUpstreamDuration } from "@gw/telemetry";
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
