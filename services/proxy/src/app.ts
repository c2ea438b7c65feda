import { createAgentCards, shareSessionEnds } from "@gw/forward";
import { type AppEnv, createBaseApp, type DirectListener, registerHealth, requireAuth } from "@gw/http";
import { createPolicyGate } from "@gw/policy";
import { createInFlight } from "@gw/ratelimit";
import { healthOf, type Runtime } from "@gw/runtime";
import { answerHooksOf, toolCatalogOf, toolSearchOf, toolStatusOf } from "@gw/tools";
import type { Hono } from "hono";
import { createAgentCache } from "./agent-cache.ts";
import { proxyChallenge } from "./challenge.ts";
import type { ProxyDeps } from "./deps.ts";
import { createDirect } from "./direct.ts";
import { createFacilitatorCache } from "./facilitator-cache.ts";
import { registerAgentCard } from "./routes/card.ts";
import { registerMethodNotAllowed } from "./routes/methods.ts";
import { registerPoll } from "./routes/poll.ts";
import { startTimeline } from "./timeline.ts";
import { createTracker, type Tracker } from "./tracker.ts";

/**
 * What `listen` serves: the two proxy modes on Node's own objects (`direct`), the rest (poll,
 * 405s, health) through the Hono app (`fetch`).
 */
export type ProxyApp = {
  app: Hono<AppEnv>;
  fetch: Hono<AppEnv>["fetch"];
  direct: DirectListener;
  inflight: Tracker;
};

/** The data plane: the two proxy modes and the poll, stateless but for short caches. */
export function createProxyApp(rt: Runtime): ProxyApp {
  startTimeline(rt.config.GW_PROXY_TIMELINE);
  const tools = toolCatalogOf(rt);
  const agents = createAgentCache(rt, rt.config.GW_AGENT_CACHE_MS);
  // A virtual server session an older client ended is refused by every replica.
  shareSessionEnds(rt);
  const isSearchServer = async (tenantId: string, agentId: string) =>
    (await agents(tenantId, agentId))?.row.toolDiscovery === "search";
  const policy = createPolicyGate({
    db: rt.store.db,
    query: rt.store.recordsQuery,
    approvalsQuery: rt.store.query,
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
        approvalId: decision.approvalId,
      }),
    toolStatus: toolStatusOf(tools, isSearchServer),
    quotas: rt.quotas,
  });
  const tracker = createTracker();
  const deps: ProxyDeps = {
    ...rt,
    agents,
    defaultRateLimit: { rps: rt.config.GW_RATE_LIMIT_RPS, burst: rt.config.GW_RATE_LIMIT_BURST },
    policy,
    answerHooks: answerHooksOf(tools, policy.policyOf, rt.dispatcher),
    toolSearch: toolSearchOf({ catalog: tools, policyOf: policy.policyOf }),
    // Graceful shutdown waits for stream records and for tool lists still being learned.
    inflight: {
      ...tracker,
      drain: async () => {
        await tracker.drain();
        await tools.drain();
      },
    },
    concurrency: createInFlight(),
    facilitators: createFacilitatorCache(rt, rt.config.GW_AGENT_CACHE_MS),
    pinnedDigest: async (tenantId, agentId, tool) =>
      (await tools.view(tenantId, agentId)).get(tool)?.pinnedDigest ?? null,
  };
  const challenge = proxyChallenge(rt.config);
  const app = createBaseApp({ logger: rt.logger });
  registerHealth(app, healthOf(rt));
  app.use("/v1/proxy/*", requireAuth(rt.verifyToken, { challenge }));
  registerPoll(app, deps);
  registerAgentCard(app, deps, createAgentCards(rt));
  registerMethodNotAllowed(app);
  return { app, fetch: app.fetch, direct: createDirect(deps, challenge), inflight: deps.inflight };
}
