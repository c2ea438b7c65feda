import { type ForwardCall, forward } from "@gw/forward";
import { bearerOf } from "@gw/vault";
import type { VirtualServer } from "@gw/virtual";
import type { ProxyDeps } from "../deps.ts";
import type { ProxyExchange } from "../exchange.ts";
import { type Admitted, admitCall } from "../pipeline.ts";
import { virtualServerOf } from "../virtual.ts";

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
  // A held body (an MCP POST, a verified envelope's inner call) or the live request stream.
  const source = call.forward ?? (call.method === "POST" ? x.incoming : null);
  await forward(
    forwardCallOf(call, await virtualServerOf(call.agent, deps)),
    source,
    { kind: "relay", caller: x, track: deps.inflight.track, start },
    deps,
  );
}

/** The admitted call as step 9 reads it. */
function forwardCallOf(call: Admitted, virtual: VirtualServer | null): ForwardCall {
  const { agent } = call;
  return {
    tenantId: call.tenantId,
    agentId: agent.id,
    invocationId: call.invocationId,
    method: call.method,
    target: call.target,
    virtual,
    protocol: agent.protocol,
    mcpMethod: call.mcp?.method ?? null,
    mcpRequestId: call.mcp?.kind === "request" ? call.mcp.id : null,
    captureBodies: agent.captureBodies,
    emitReceipts: agent.emitReceipts,
    credentialRef: agent.credentialRef,
    subjectToken: () => bearerOf(call.headers.authorization),
    caller: {
      principal: { sub: call.principal.userId, scopes: call.principal.scopes, claims: call.principal.claims },
      agentName: agent.name,
      mode: "streaming",
    },
    payment: call.payment,
    headers: call.rawHeaders,
    clientAddress: call.clientAddress,
    responseHeaders: call.responseHeaders,
    record: call.record,
  };
}
