import type { AppEnv } from "@gw/http";
import { listTools } from "@gw/tools";
import type { Hono } from "hono";
import { type AgentRouteDeps, agentsCtx } from "../ctx.ts";

export function registerListTools(app: Hono<AppEnv>, deps: AgentRouteDeps) {
  app.get("/agents/:id/tools", async (c) => {
    return c.json(await listTools({ ctx: agentsCtx(c, deps), agentId: c.req.param("id") }));
  });
}
