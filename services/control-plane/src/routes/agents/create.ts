import { agentJson, CreateAgent, createAgent } from "@gw/agents";
import { type AppEnv, readJson } from "@gw/http";
import type { Hono } from "hono";
import { type AgentRouteDeps, agentsCtx, receiptsEnabled } from "./ctx.ts";

export function registerCreateAgent(app: Hono<AppEnv>, deps: AgentRouteDeps) {
  app.post("/agents", async (c) => {
    const input = await readJson(c, CreateAgent);
    const row = await createAgent({ ctx: agentsCtx(c, deps), input });
    c.header("Location", `/v1/agents/${row.id}`);
    return c.json(agentJson(row, { receiptsEnabled: receiptsEnabled(deps) }), 201);
  });
}
