import { rateLimitedError } from "@gw/ratelimit";
import type { Call } from "../call.ts";
import type { ProxyDeps } from "../deps.ts";

/** Step 3: the agent's token bucket (its rate_limit, else the deployment default): 429 + Retry-After. */
export async function rateLimit(call: Call, deps: ProxyDeps): Promise<Call> {
  const limit = call.agent.rateLimit ?? deps.defaultRateLimit;
  const taken = await deps.rateLimiter.take({ tenantId: call.tenantId, agentId: call.agent.id }, limit);
  if (!taken.allowed) throw rateLimitedError(taken.retryAfterSeconds);
  return call;
}
