import { newId } from "@gw/core";
import type { Call, Mode } from "./call.ts";
import type { ProxyDeps } from "./deps.ts";
import type { ProxyExchange } from "./exchange.ts";
import { loadAgent } from "./steps/agent.ts";
import { readBody } from "./steps/body.ts";
import { limitConcurrency } from "./steps/concurrency.ts";
import { checkHeaders } from "./steps/headers.ts";
import { openInvocation } from "./steps/invocation.ts";
import { parseMcp } from "./steps/mcp.ts";
import { checkPayment } from "./steps/payment.ts";
import { evaluatePolicy } from "./steps/policy.ts";
import { rateLimit } from "./steps/rate-limit.ts";
import { refuseStreamedMcp, verifyAction } from "./steps/verifier.ts";

export type Admitted = Awaited<ReturnType<typeof admitCall>>;

/**
 * The proxy pipeline (docs/architecture.md), steps 1–8, the one definition both modes run. Step 9
 * is the forward step (packages/forward): the streaming route runs it at once
 * (`routes/stream.ts`); the transactional route answers 202 and a worker runs it
 * (`routes/transact.ts`). Every step before 8 is
 * cheap, fails fast with a DomainError, and creates nothing.
 */
export async function admitCall(x: ProxyExchange, deps: ProxyDeps, mode: Mode) {
  try {
    return await admit(x, deps, mode);
  } catch (e) {
    // A builder query's failure (raw queries report their own): the concurrency step's 503, not 429.
    deps.store.health.failed(e);
    throw e;
  }
}

async function admit(x: ProxyExchange, deps: ProxyDeps, mode: Mode) {
  // 1. Authenticated by the router in front of the proxy routes (direct.ts: 401, no body).
  let call = newCall(x, mode);
  call = await loadAgent(call, deps); // 2. the agent in the tenant: 404, 422 (405 for GET/DELETE)
  call = await rateLimit(call, deps); // 3. per-agent bucket: 429
  call = await limitConcurrency(call, deps, x.outgoing); // 3. calls in flight per agent and tenant: 429
  call = refuseStreamedMcp(call, deps); // 5. verified-action mode: no MCP agent on the stream: 409
  if (call.method === "POST") {
    call = checkHeaders(call); // 4. X-Gateway-Model: 400
    call = await readBody(call, x.incoming); // 4. the body: 413
    // Verification first: it turns an envelope into the inner call that step 5 then parses.
    call = await verifyAction(call, deps); // 5. verified-action mode: 400, 403, 409, 413
    call = parseMcp(call); // 5. the JSON-RPC message forwarded, MCP headers: 400
    call = await evaluatePolicy(call, deps, x.incoming); // 6. policy: 403 on deny, decision recorded
    call = await checkPayment(call, deps); // 7. x402: 402, 503
  }
  // An MCP GET (standalone SSE stream) or DELETE (session end) is forwarded after steps 1–3.
  return openInvocation(call, deps); // 8. the invocation, with the call's reservations
}

function newCall(x: ProxyExchange, mode: Mode): Call {
  const { incoming, principal } = x;
  const method = x.method === "GET" ? "GET" : x.method === "DELETE" ? "DELETE" : "POST";
  // Filled by the steps; the placeholders are never read before their step ran.
  return {
    mode,
    method,
    principal,
    tenantId: principal.tenantId,
    agentId: x.agentId,
    path: x.path,
    headers: incoming.headers,
    rawHeaders: incoming.rawHeaders,
    clientAddress: incoming.socket.remoteAddress,
    agent: undefined as unknown as Call["agent"],
    target: undefined as unknown as Call["target"],
    model: null,
    body: null,
    mcp: null,
    forward: null,
    policy: null,
    payment: null,
    reservations: [],
    responseHeaders: {},
    invocationId: newId("inv"),
  };
}
