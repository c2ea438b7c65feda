import { conflict } from "@gw/core";
import { verifyMcpCall } from "@gw/verifier";
import type { Call } from "../call.ts";
import type { ProxyDeps } from "../deps.ts";

/**
 * Step 5, streaming endpoint (verified-action mode): an MCP agent is refused with 409 whatever the
 * method, before its body is parsed, before payment and before any invocation exists: the exact
 * comparison of the call with the verified action exists only on the transactional endpoint.
 */
export function refuseStreamedMcp(call: Call, deps: ProxyDeps): Call {
  if (deps.features.verifier && call.mode === "streaming" && call.speaks.verified) {
    throw conflict("in verified-action mode MCP agents are called on the transactional endpoint");
  }
  return call;
}

/**
 * Step 5, transactional endpoint (verified-action mode, docs/verifier.md): the envelope checks, the
 * verifier run, the comparison and the replay preflight (400 / 403 / 409 / 413), before policy,
 * payment and invocation creation. A verified call forwards only the envelope's inner call and
 * carries its digest as a reservation, taken with the invocation in step 8. Other MCP methods and
 * HTTP agents pass through; logic lives in @gw/verifier.
 */
export function verifyAction(call: Call, deps: ProxyDeps): Call | Promise<Call> {
  const binary = deps.config.GW_VERIFIER_BINARY;
  if (!deps.features.verifier || binary === undefined) return call;
  if (call.mode !== "transactional" || !call.speaks.verified || call.body === null) return call;
  return verify(call, call.body, deps, binary);
}

async function verify(call: Call, body: Buffer, deps: ProxyDeps, binary: string): Promise<Call> {
  const verified = await verifyMcpCall(
    { body, sub: call.principal.userId, tenantId: call.tenantId, agentId: call.agent.id },
    {
      binary,
      query: deps.store.query,
      // Why a call was refused, for operators; never the bundle or the call.
      onRefused: (why) =>
        deps.logger.info({ agent_id: call.agent.id, verifier_refusal: why }, "verified action refused"),
    },
  );
  if (verified === null) return call;
  call.forward = verified.forward;
  call.request = verified.message;
  call.reservations.push(verified.reservation);
  return call;
}
