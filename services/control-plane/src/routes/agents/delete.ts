import { deleteAgent } from "@gw/agents";
import type { AppEnv } from "@gw/http";
import type { Hono } from "hono";
import { type AgentRouteDeps, agentsCtx } from "./ctx.ts";

export function registerDeleteAgent(app: Hono<AppEnv>, deps: AgentRouteDeps) {
  app.delete("/agents/:id", async (c) => {
    await deleteAgent({ ctx: agentsCtx(c, deps), id: c.req.param("id") });
    return c.body(null, 204);
  });
}
