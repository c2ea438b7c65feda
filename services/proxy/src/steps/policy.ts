import type { IncomingMessage } from "node:http";
import { LIMITS } from "@gw/core";
import { readNodeBodyCapped } from "@gw/http";
import { callPrice } from "@gw/payments";
import { approvalRequired, deniedByPolicy, quotaExceeded } from "@gw/policy";
import type { Call } from "../call.ts";
import type { ProxyDeps } from "../deps.ts";

/**
 * Step 6: the tenant's policy decides allow, warn or deny, once per call. A deny is recorded
 * before it is answered; an allow or warn is recorded by step 8 with the invocation. Deny → 403 with nothing created or
 * forwarded (429 when a quota counter is spent); warn → the call proceeds with X-Gateway-Policy-Warning. No document → `call.policy`
 * stays null (not the same as allow).
 */
export function evaluatePolicy(call: Call, deps: ProxyDeps, incoming: IncomingMessage): Call | Promise<Call> {
  // A tenant known to have no policy (the cache's): no input built, no promise.
  if (deps.policy.none(call.tenantId)) return call;
  return decide(call, deps, incoming);
}

async function decide(call: Call, deps: ProxyDeps, incoming: IncomingMessage): Promise<Call> {
  const decision = await deps.policy.decide(
    {
      tenantId: call.tenantId,
      agentId: call.agent.id,
      protocol: call.agent.protocol,
      rpcMethod: call.request?.method ?? null,
      mcpTool: call.request?.tool ?? null,
      model: call.model,
      bodySize: bodySizeOf(call),
      principal: { sub: call.principal.userId, scopes: call.principal.scopes, claims: call.principal.claims },
      agentName: call.agent.name,
      mode: call.mode,
      arguments: call.request?.kind === "request" ? call.request.arguments : undefined,
      price: callPrice(call.agent, call.request?.tool ?? null),
    },
    { body: () => heldBody(call, incoming) },
  );
  if (!decision) return call;
  if (decision.action === "deny") {
    if (decision.retryAfterSeconds !== undefined) throw quotaExceeded(decision.retryAfterSeconds);
    throw decision.approvalId !== undefined ? approvalRequired(decision.approvalId) : deniedByPolicy();
  }
  call.policy = { action: decision.action, matchedRule: decision.matchedRule };
  call.decision = decision.unrecorded ?? null;
  if (decision.answer)
    call.answerGuard = {
      ...decision.answer,
      rules: [...decision.answer.rules],
      tool: call.request?.tool ?? null,
    };
  // The reason is printable ASCII by construction (a classifier's is cleaned): a valid header value.
  if (decision.action === "warn") call.responseHeaders["x-gateway-policy-warning"] = decision.reason;
  return call;
}

/**
 * The bytes to forward, for an approval bound to a non-MCP call's body: a streamed body is read
 * (under the transactional cap: 413 beyond) and then forwarded as held, only when a
 * require_approval rule decides the call.
 */
async function heldBody(call: Call, incoming: IncomingMessage): Promise<Uint8Array> {
  if (call.forward === null) {
    call.body = await readNodeBodyCapped(incoming, LIMITS.transactMaxBodyBytes);
    call.forward = call.body;
  }
  return call.forward;
}

/** Bytes to forward: held, or declared by a streamed body; null when a stream declares nothing. */
function bodySizeOf(call: Call): number | null {
  if (call.forward) return call.forward.length;
  const declared = call.headers["content-length"];
  return declared !== undefined && /^\d{1,15}$/.test(declared) ? Number(declared) : null;
}
