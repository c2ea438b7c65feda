import { deleteAgent, getAgent } from "@gw/agents";
import type { AppEnv } from "@gw/http";
import type { Hono } from "hono";
import { audited } from "../../audit.ts";
import { agentChanges } from "./audit.ts";
import { type AgentRouteDeps, agentsCtx } from "./ctx.ts";

export function registerDeleteAgent(app: Hono<AppEnv>, deps: AgentRouteDeps) {
  app.delete("/agents/:id", async (c) => {
    const ctx = agentsCtx(c, deps);
    const id = c.req.param("id");
    await audited(c, ctx.db, async (tx, audit) => {
      const txCtx = { ...ctx, db: tx };
      const before = await getAgent({ ctx: txCtx, id });
      await deleteAgent({ ctx: txCtx, id });
      await audit("agent.delete", id, agentChanges(before, null));
    });
    return c.body(null, 204);
  });
}
