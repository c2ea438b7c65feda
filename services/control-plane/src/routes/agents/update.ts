import { agentJson, getAgent, PatchAgent, updateAgent } from "@gw/agents";
import { type AppEnv, readJson } from "@gw/http";
import type { Hono } from "hono";
import { audited } from "../../audit.ts";
import { agentChanges } from "./audit.ts";
import { type AgentRouteDeps, agentsCtx, receiptsEnabled } from "./ctx.ts";

export function registerUpdateAgent(app: Hono<AppEnv>, deps: AgentRouteDeps) {
  app.patch("/agents/:id", async (c) => {
    const ctx = agentsCtx(c, deps);
    const id = c.req.param("id");
    // 404 before 400: a caller without the agent learns nothing from its body's errors.
    await getAgent({ ctx, id });
    const input = await readJson(c, PatchAgent);
    const row = await audited(c, ctx.db, async (tx, audit) => {
      const txCtx = { ...ctx, db: tx };
      const before = await getAgent({ ctx: txCtx, id });
      const after = await updateAgent({ ctx: txCtx, id, input });
      await audit("agent.update", id, agentChanges(before, after));
      return after;
    });
    return c.json(agentJson(row, { receiptsEnabled: receiptsEnabled(deps) }));
  });
}
