import type { Forwarded } from "@gw/forward";
import { forwardableHeaders } from "@gw/upstream";
import { SEARCH_TOOL } from "@gw/virtual";
import type { Call } from "./call.ts";

/**
 * The admitted call as step 9 forwards it (`Forwarded`, packages/forward), built once in step 8:
 * the streaming route passes it on; the transactional path stores it with the pending invocation
 * (Postgres, the source of truth), and the worker reads it back when it claims the call (the
 * queue, the doorbell, carries ids only).
 */
export function forwardedOf(call: Call): Forwarded {
  const { agent, request } = call;
  return {
    invocationId: call.invocationId,
    tenantId: call.tenantId,
    agentId: agent.id,
    method: call.method,
    upstreamUrl: agent.upstreamUrl,
    virtual: agent.members
      ? { name: agent.name, members: agent.members, discovery: agent.toolDiscovery }
      : null,
    credentialRef: agent.credentialRef,
    protocol: agent.protocol,
    rpcMethod: request?.method ?? null,
    rpcId: request?.kind === "request" ? request.id : null,
    captureBodies: agent.captureBodies,
    emitReceipts: agent.emitReceipts,
    // A stored call keeps only what may go upstream (never the caller's token); a streamed one
    // is filtered at the dial, as the worker's is again.
    headers:
      call.mode === "transactional"
        ? forwardableHeaders(call.rawHeaders, { keepContentLength: false })
        : call.rawHeaders,
    clientAddress: call.clientAddress,
    payment: call.payment,
    prices: pricesOf(call),
    answerGuard: call.answerGuard,
    sub: call.principal.userId,
  };
}

/**
 * The prices a `tools/list` answer shows, and a search-mode virtual server's `search_tools` answer
 * (packages/forward, mcp-x402.ts): the cached agent row itself when streamed (its price table is
 * built once per row), a copy of the two fields when stored.
 */
function pricesOf(call: Call): Forwarded["prices"] {
  const { agent, request } = call;
  if (!agent.toolPrices) return null;
  const shown =
    request?.method === "tools/list" ||
    (request?.method === "tools/call" && request.tool === SEARCH_TOOL && agent.toolDiscovery === "search");
  if (!shown) return null;
  return call.mode === "streaming" ? agent : { toolPrices: agent.toolPrices, price: agent.price };
}
