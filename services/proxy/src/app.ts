import { type AppEnv, createBaseApp, registerHealth, requireAuth } from "@gw/http";
import { createPolicyGate } from "@gw/policy";
import { createInFlight } from "@gw/ratelimit";
import { healthOf, type Runtime } from "@gw/runtime";
import type { Hono } from "hono";
import { createAgentCache } from "./agent-cache.ts";
import { proxyChallenge } from "./challenge.ts";
import type { ProxyDeps } from "./deps.ts";
import { registerMethodNotAllowed } from "./routes/methods.ts";
import { registerPoll } from "./routes/poll.ts";
import { registerStream } from "./routes/stream.ts";
import { registerTransact } from "./routes/transact.ts";
import { createTracker, type Tracker } from "./tracker.ts";

export type ProxyApp = { app: Hono<AppEnv>; inflight: Tracker };

/** The data plane: the two proxy modes and the poll, stateless but for short caches. */
export function createProxyApp(rt: Runtime): ProxyApp {
  const deps: ProxyDeps = {
    ...rt,
    agents: createAgentCache(rt, rt.config.GW_AGENT_CACHE_MS),
    defaultRateLimit: { rps: rt.config.GW_RATE_LIMIT_RPS, burst: rt.config.GW_RATE_LIMIT_BURST },
    policy: createPolicyGate({
      db: rt.store.db,
      query: rt.store.recordsQuery,
      dispatcher: rt.dispatcher,
      cacheMs: rt.config.GW_POLICY_CACHE_MS,
      subscribe: (invalidate) =>
        rt.changes.subscribe((change) => {
          if (change.kind === "policy") invalidate(change.tenantId);
        }),
      // Read at call time: the emitter is the runtime's (fail-open, never waits).
      onDecision: (decisionId, input, decision) =>
        rt.receipts?.decision({
          tenantId: input.tenantId,
          decisionId,
          agentId: input.agentId,
          action: decision.action,
        }),
    }),
    inflight: createTracker(),
    inFlight: createInFlight(),
  };
  const app = createBaseApp({ logger: rt.logger });
  registerHealth(app, healthOf(rt));
  app.use("/v1/proxy/*", requireAuth(rt.verifyToken, { challenge: proxyChallenge(rt.config) }));
  registerTransact(app, deps);
  registerStream(app, deps);
  registerPoll(app, deps);
  registerMethodNotAllowed(app);
  return { app, inflight: deps.inflight };
}
