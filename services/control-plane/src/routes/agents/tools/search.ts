import { getAgent } from "@gw/agents";
import { type AppEnv, readJson } from "@gw/http";
import { TrySearchInput, trySearch } from "@gw/tools";
import type { Hono } from "hono";
import { type AgentRouteDeps, agentsCtx } from "../ctx.ts";

/**
 * POST /v1/agents/{id}/tools/search: the console's "try a search" (docs/tools.md). A read in POST
 * form (a GET would shadow a tool named "search" at /tools/{name}): nothing is written or audited.
 */
export function registerTrySearch(app: Hono<AppEnv>, deps: AgentRouteDeps) {
  app.post("/agents/:id/tools/search", async (c) => {
    const ctx = agentsCtx(c, deps);
    const agentId = c.req.param("id");
    // 404 before 400: a caller without the agent learns nothing from its body's errors.
    await getAgent({ ctx, id: agentId });
    const input = await readJson(c, TrySearchInput);
    return c.json(await trySearch({ ctx, agentId, query: input.query, limit: input.limit }));
  });
}
