import type { Settled } from "@gw/payments";
import { type ForwardCall, gatewayHeaders } from "../call.ts";
import { type Relay, relayCompleted } from "../sink.ts";
import type { Tap } from "../tap.ts";

/** A merged SSE stream to the caller, written event by event with backpressure. */
export type MergedOut = {
  readonly outgoing: Relay["caller"]["outgoing"];
  /** Writes whole events (waits while the caller's socket is full); nothing once the caller left. */
  write(chunk: Buffer): Promise<void>;
  /** Ends the stream and records the call as relayed: a stream the members or the caller ended. */
  finish(): Promise<void>;
};

/**
 * The head of a merged stream (`subscriptions/listen`, an older client's GET) written at once, and
 * its events fed to the caller, the capture and the answer digest as they come, counted for the
 * record (time to the first event, bytes).
 */
export function mergedOut(call: ForwardCall, tap: Tap, settled: Settled, sink: Relay): MergedOut {
  const { outgoing } = sink.caller;
  outgoing.writeHead(200, {
    ...gatewayHeaders(call),
    "x-request-id": sink.caller.requestId,
    "content-type": "text/event-stream",
    "cache-control": "no-cache, no-transform",
  });
  outgoing.flushHeaders();
  let ttftMs: number | null = null;
  let respSize = 0;
  return {
    outgoing,
    write: async (chunk) => {
      if (chunk.length === 0 || outgoing.destroyed) return;
      ttftMs ??= tap.elapsed();
      respSize += chunk.length;
      tap.respCapture?.add(chunk);
      tap.respDigest?.update(chunk);
      if (!outgoing.write(chunk)) await new Promise((r) => outgoing.once("drain", r).once("close", r));
    },
    finish: async () => {
      if (!outgoing.destroyed) await new Promise<void>((r) => outgoing.end(r));
      relayCompleted(call, tap, settled, sink, {
        status: 200,
        upstreamStatus: 200,
        ttftMs,
        respSize,
        ended: "end",
        failure: null,
      });
    },
  };
}
