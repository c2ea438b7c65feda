import type { Settled } from "@gw/payments";
import { Cancel } from "@gw/upstream";
import { ERRORS, type Member, rpcError, type StreamPlan } from "@gw/virtual";
import type { ForwardCall } from "../call.ts";
import { openCallCredential } from "../credential.ts";
import type { ForwardDeps } from "../deps.ts";
import { dialStream } from "../dial.ts";
import type { Relay } from "../sink.ts";
import type { Tap } from "../tap.ts";
import { memberCall } from "../target.ts";
import { deliver, encode } from "./deliver.ts";
import { linkedCall } from "./member-adapt.ts";
import { knownLink, linkOf } from "./member-link.ts";
import { mergedOut } from "./merged-out.ts";
import { RelayedEvents } from "./relay-events.ts";
import { memberIdsOf } from "./session-key.ts";

type Opened = { member: Member; body: AsyncIterable<Buffer>; events: RelayedEvents; close: () => void };

/**
 * An older client's `GET` on the stream path (docs/mcp.md, Server-initiated messages): every older
 * member's GET stream on the member session of the client's relayed capabilities, merged into one
 * SSE stream event by event, each member's requests with gateway ids (relay-events.ts). 2026-07-28
 * members have no such stream. It ends when every member stream ended or the client went away; no
 * member stream at all is the 405 a server without one answers.
 */
export async function relayStream(
  call: ForwardCall,
  plan: StreamPlan,
  tap: Tap,
  settled: Settled,
  sink: Relay,
  deps: ForwardDeps,
  members: readonly Member[],
): Promise<void> {
  const log = sink.caller.log;
  const pooled: ForwardCall = plan.relays ? { ...call, relays: plan.relays } : call;
  const ids = memberIdsOf(deps.config);
  const opened = await Promise.all(
    members.map(async (member): Promise<Opened | null> => {
      const link = knownLink(member, pooled) ?? (await linkOf(member, pooled, deps, log).catch(() => null));
      if (link?.kind !== "session") return null;
      const mcall = linkedCall(memberCall(pooled, member, null), link, "GET");
      const credential = await openCallCredential(mcall, member.target.host, deps, { log });
      if (credential === "refused") return null;
      const cancel = new Cancel();
      const res = await dialStream(mcall, member.target, credential, null, cancel, deps);
      if (res.kind === "failure") return null;
      const type = res.res.headers["content-type"];
      if (res.res.statusCode !== 200 || !String(type ?? "").includes("text/event-stream")) {
        // A member without a GET stream (405), or one already held on its session (409).
        await res.res.body.dump().catch(() => {});
        return null;
      }
      const scope = {
        tenantId: call.tenantId,
        agentId: call.agentId,
        member: member.agentId,
        memberSession: link.sessionId ?? "",
      };
      return {
        member,
        body: res.res.body,
        events: new RelayedEvents(scope, ids),
        close: () => cancel.abort(),
      };
    }),
  );
  const streams = opened.filter((o): o is Opened => o !== null);
  if (streams.length === 0) {
    const refusal = rpcError(405, null, ERRORS.serverError, "Method not allowed: no member offers a stream");
    return deliver(call, tap, settled, sink, deps, {
      status: 405,
      body: encode(refusal),
      headers: { allow: "POST" },
      reached: true,
    });
  }
  const closeAll = () => {
    for (const s of streams) s.close();
  };
  sink.caller.outgoing.once("close", closeAll);
  const out = mergedOut(call, tap, settled, sink);
  // Each member's events are whole when written (the transform holds a partial one), so events of
  // different members never interleave inside one another.
  await Promise.all(
    streams.map(async (s) => {
      try {
        for await (const chunk of s.body) {
          if (out.outgoing.destroyed) break;
          const step = await s.events.push(chunk);
          await out.write(step.out);
          if (step.end) break;
        }
      } catch {
        // A member stream that broke off ends its part only.
      } finally {
        s.close();
      }
    }),
  );
  closeAll();
  await out.finish();
}
