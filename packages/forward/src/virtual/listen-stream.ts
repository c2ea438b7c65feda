import type { Settled } from "@gw/payments";
import { mergeListen } from "@gw/virtual";
import type { ForwardCall } from "../call.ts";
import type { ForwardDeps } from "../deps.ts";
import type { Relay } from "../sink.ts";
import type { Tap } from "../tap.ts";
import type { Route } from "../target.ts";
import { deliver, encode, failed } from "./deliver.ts";
import { memberPort, openListens } from "./member-port.ts";
import { mergedOut } from "./merged-out.ts";

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
  sink.caller.outgoing.once("close", () => merged.close());
  const out = mergedOut(call, tap, settled, sink);
  for await (const event of merged.events) {
    if (out.outgoing.destroyed) break;
    await out.write(Buffer.from(event));
  }
  merged.close();
  await out.finish();
}
