import { newId } from "@gw/core";
import type { Call, Mode } from "./call.ts";
import type { ProxyDeps } from "./deps.ts";
import type { ProxyExchange } from "./exchange.ts";
import { loadAgent } from "./steps/agent.ts";
import { readBody } from "./steps/body.ts";
import { limitConcurrency } from "./steps/concurrency.ts";
import { checkConnection } from "./steps/connection.ts";
import { checkHeaders } from "./steps/headers.ts";
import { openInvocation } from "./steps/invocation.ts";
import { checkOrigin } from "./steps/origin.ts";
import { parseRequest } from "./steps/parse.ts";
import { checkPayment } from "./steps/payment.ts";
import { evaluatePolicy } from "./steps/policy.ts";
import { checkPushUrls } from "./steps/push.ts";
import { rateLimit } from "./steps/rate-limit.ts";
import { refuseStreamedMcp, verifyAction } from "./steps/verifier.ts";

export type Admitted = Awaited<ReturnType<typeof admitCall>>;

/**
 * The proxy pipeline (docs/interface.md, The proxy pipeline), steps 1–8 in their order, the one
 * definition both modes run. Step 9 is the forward step (packages/forward): the streaming route
 * runs it at once (`routes/stream.ts`); the transactional route answers 202 and a worker runs it
 * (`routes/transact.ts`). Every step before 8 is cheap, fails fast with a DomainError, and
 * creates nothing.
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
  const loaded = loadAgent(call, deps); // 2. the agent in the tenant: 404, 422 (405 for GET/DELETE)
  call = loaded instanceof Promise ? await loaded : loaded; // a cached agent: no promise
  call = checkOrigin(call, deps); // 2. a protocol that checks Origin (MCP): one not allowed: 403
  const limited = rateLimit(call, deps); // 3. per-agent bucket: 429 (a live lease: no promise)
  call = limited instanceof Promise ? await limited : limited;
  // 3. calls in flight per agent and tenant: 429 (a free slot: no promise)
  const slotted = limitConcurrency(call, deps, x.outgoing);
  call = slotted instanceof Promise ? await slotted : slotted;
  if (call.method === "POST") {
    call = checkHeaders(call); // 4. X-Gateway-Model: 400
    const read = readBody(call, x.incoming); // 4. the body: 413 (one already here: no promise)
    call = read instanceof Promise ? await read : read;
  }
  call = refuseStreamedMcp(call, deps); // 5. verified-action mode: no MCP agent on the stream: 409
  if (call.method === "POST") {
    // Verification first: it turns an envelope into the inner call that step 5 then parses.
    // 5. verified-action mode: 400, 403, 409, 413 (any other call: no promise)
    const verified = verifyAction(call, deps);
    call = verified instanceof Promise ? await verified : verified;
    call = parseRequest(call); // 5. the protocol's message (MCP: JSON-RPC, its headers): 400
    // 5. webhook URLs (A2A push notification configs) under the SSRF rules: 400
    if (call.request?.pushUrls?.length) call = await checkPushUrls(call, deps);
    // 6. policy: 403 on deny, decision recorded (a tenant known to have none: no promise)
    const decided = evaluatePolicy(call, deps, x.incoming);
    call = decided instanceof Promise ? await decided : decided;
  }
  try {
    // 6. a per-user credential without the caller's grant: "connection required" (docs/connections.md).
    // An agent without a credential (and not virtual) skips the step: not even a promise.
    if (call.agent.credentialRef !== null || call.agent.members !== null)
      call = await checkConnection(call, deps);
    // 7. x402: 402, 503. An agent with neither a price nor tool prices skips it: not even a promise.
    if (call.method === "POST" && (call.agent.price || call.agent.toolPrices?.length))
      call = await checkPayment(call, deps);
    // An MCP GET (standalone SSE stream) or DELETE (session end) is forwarded after steps 1–3 and 5.
    // 8. the invocation, with the call's reservations and decision (a deferred record: no promise)
    const opened = openInvocation(call, deps);
    return opened instanceof Promise ? await opened : opened;
  } catch (e) {
    // Refused after an allow or warn and before its invocation took the decision: written alone.
    if (call.decision) void deps.policy.writeAlone(call.decision).catch(() => {});
    throw e;
  }
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
    speaks: undefined as unknown as Call["speaks"],
    target: undefined as unknown as Call["target"],
    model: null,
    body: null,
    request: null,
    forward: null,
    policy: null,
    decision: null,
    answerGuard: null,
    payment: null,
    reservations: [],
    responseHeaders: {},
    invocationId: newId("inv"),
  };
}
