import { rateLimitedError, type TakeResult } from "@gw/ratelimit";
import type { Call } from "../call.ts";
import type { ProxyDeps } from "../deps.ts";

/**
 * Step 3: the agent's token bucket (its rate_limit, else the deployment default): 429 +
 * Retry-After. Synchronous when the limiter decides alone (a live lease): no promise per call.
 */
export function rateLimit(call: Call, deps: ProxyDeps): Call | Promise<Call> {
  const limit = call.agent.rateLimit ?? deps.defaultRateLimit;
  const taken = deps.rateLimiter.take({ tenantId: call.tenantId, agentId: call.agent.id }, limit);
  return taken instanceof Promise ? taken.then((t) => admitted(call, t)) : admitted(call, taken);
}

function admitted(call: Call, taken: TakeResult): Call {
  if (!taken.allowed) throw rateLimitedError(taken.retryAfterSeconds);
  return call;
}
