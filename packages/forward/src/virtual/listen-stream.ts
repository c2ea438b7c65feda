import type { Settled } from "@gw/payments";
import { mergeListen } from "@gw/virtual";
import { type ForwardCall, gatewayHeaders } from "../call.ts";
import type { ForwardDeps } from "../deps.ts";
import { type Relay, relayCompleted } from "../sink.ts";
import type { Tap } from "../tap.ts";
import type { Route } from "../target.ts";
import { deliver, encode, failed } from "./deliver.ts";
import { memberPort, openListens } from "./member-port.ts";

type Served = Extract<Route, { kind: "virtual" }>;

/**
 * `subscriptions/listen`: the members' streams merged into one SSE stream to the caller, with
 * backpressure; it ends when every member stream ended or the caller went away (a listen stream
 * the caller closes is its normal end, like a standalone GET stream). When no member opened a
 * stream, the first member's answer goes back as it is, or the call fails like an upstream's.
 */
export async function listen(
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
