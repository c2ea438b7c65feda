import type { AppEnv } from "@gw/http";
import { type RefreshDeps, refreshTools } from "@gw/tools";
import type { Hono } from "hono";
import { type AgentRouteDeps, agentsCtx } from "../ctx.ts";

/** POST /v1/agents/{id}/tools/refresh: the gateway lists the server's tools itself (docs/tools.md). */
export function registerRefreshTools(app: Hono<AppEnv>, deps: AgentRouteDeps, refresh: RefreshDeps) {
  app.post("/agents/:id/tools/refresh", async (c) => {
    const ctx = agentsCtx(c, deps);
    return c.json(await refreshTools({ ctx, agentId: c.req.param("id"), deps: refresh }));
  });
}
