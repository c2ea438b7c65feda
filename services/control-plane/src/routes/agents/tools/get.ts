import type { AppEnv } from "@gw/http";
import { getTool } from "@gw/tools";
import type { Hono } from "hono";
import { type AgentRouteDeps, agentsCtx } from "../ctx.ts";

export function registerGetTool(app: Hono<AppEnv>, deps: AgentRouteDeps) {
  app.get("/agents/:id/tools/:name", async (c) => {
    const ctx = agentsCtx(c, deps);
    return c.json(await getTool({ ctx, agentId: c.req.param("id"), name: c.req.param("name") }));
  });
}
