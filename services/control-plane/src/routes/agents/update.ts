import { agentJson, getAgent, PatchAgent, updateAgent } from "@gw/agents";
import { type AppEnv, readJson } from "@gw/http";
import type { Hono } from "hono";
import { type AgentRouteDeps, agentsCtx, receiptsEnabled } from "./ctx.ts";

export function registerUpdateAgent(app: Hono<AppEnv>, deps: AgentRouteDeps) {
  app.patch("/agents/:id", async (c) => {
    const ctx = agentsCtx(c, deps);
    const id = c.req.param("id");
    // 404 before 400: a caller without the agent learns nothing from its body's errors.
    await getAgent({ ctx, id });
    const input = await readJson(c, PatchAgent);
    const row = await updateAgent({ ctx, id, input });
    return c.json(agentJson(row, { receiptsEnabled: receiptsEnabled(deps) }));
  });
}
