import { agentJson, getAgent } from "@gw/agents";
import type { AppEnv } from "@gw/http";
import type { Hono } from "hono";
import { type AgentRouteDeps, agentsCtx, receiptsEnabled } from "./ctx.ts";

export function registerGetAgent(app: Hono<AppEnv>, deps: AgentRouteDeps) {
  app.get("/agents/:id", async (c) => {
    const row = await getAgent({ ctx: agentsCtx(c, deps), id: c.req.param("id") });
    return c.json(agentJson(row, { receiptsEnabled: receiptsEnabled(deps) }));
  });
}
