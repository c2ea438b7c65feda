import type { ServerResponse } from "node:http";
import { unavailable } from "@gw/core";
import { tooManyConcurrentError } from "@gw/ratelimit";
import type { Call } from "../call.ts";
import type { ProxyDeps } from "../deps.ts";

/**
 * Step 3, with the rate limit: calls in flight per agent (`max_concurrency`, else
 * GW_AGENT_MAX_CONCURRENCY) and per tenant (GW_TENANT_MAX_CONCURRENCY), in this replica: 429 +
 * Retry-After: 1 beyond. The slot is held until the caller's response is closed: a stream's end or abort, a transactional call's
 * 202 (the worker's own bound is GW_WORKER_CONCURRENCY), or any error answer. While the store is
 * down the slots are full of admissions waiting on it: the refusal is then 503 `store unavailable`,
 * what the caller can act on, not 429 (`StoreHealth` in @gw/db).
 */
export function limitConcurrency(
  call: Call,
  deps: ProxyDeps,
  outgoing: ServerResponse,
): Call | Promise<never> {
  const release = deps.concurrency.acquire(
    { tenantId: call.tenantId, agentId: call.agent.id },
    {
      agent: call.agent.maxConcurrency ?? deps.config.GW_AGENT_MAX_CONCURRENCY,
      tenant: deps.config.GW_TENANT_MAX_CONCURRENCY,
    },
  );
  if (!release) return refuse(call, deps);
  if (outgoing.closed) release();
  else outgoing.once("close", release);
  return call;
}

async function refuse(call: Call, deps: ProxyDeps): Promise<never> {
  throw (await deps.store.health.check())
    ? unavailable("store unavailable")
    : tooManyConcurrentError(call.tenantId);
}
