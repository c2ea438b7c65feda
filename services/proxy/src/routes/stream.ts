import { forward } from "@gw/forward";
import { closeOnDrain } from "@gw/http";
import { bearerOf } from "@gw/vault";
import type { ProxyDeps } from "../deps.ts";
import type { ProxyExchange } from "../exchange.ts";
import { admitCall } from "../pipeline.ts";

/**
 * POST /v1/proxy/{id}/stream (and GET/DELETE for MCP agents; routed by direct.ts): steps 1–8, then
 * step 9, the forward step (packages/forward), relaying the answer to the caller as it arrives.
 * Failures before the upstream answered are DomainErrors (402, 502, 504) through the one error
 * map, carrying the invocation id.
 */
export async function streamCall(x: ProxyExchange, deps: ProxyDeps): Promise<void> {
  const start = performance.now();
  const call = await admitCall(x, deps, "streaming");
  x.fields.invocation_id = call.invocationId;
  // A standalone GET stream never ends by itself: shutdown closes it rather than waiting for it.
  if (call.method === "GET") closeOnDrain(x.outgoing);
  // A held body (an MCP POST, a verified envelope's inner call) or the live request stream.
  const source = call.forward ?? (call.method === "POST" ? x.incoming : null);
  const local = {
    target: call.target,
    subjectToken: () => bearerOf(call.headers.authorization),
    caller: {
      principal: { sub: call.principal.userId, scopes: call.principal.scopes, claims: call.principal.claims },
      agentName: call.agent.name,
      mode: "streaming" as const,
    },
    responseHeaders: call.responseHeaders,
    record: call.record,
  };
  await forward(
    call.forwarded,
    local,
    source,
    { kind: "relay", caller: x, track: deps.inflight.track, start },
    deps,
  );
}
