import { agentJson, CreateAgent, createAgent } from "@gw/agents";
import { type AppEnv, readJson } from "@gw/http";
import type { Hono } from "hono";
import { audited } from "../../audit.ts";
import { agentChanges } from "./audit.ts";
import { type AgentRouteDeps, agentsCtx, receiptsEnabled } from "./ctx.ts";

export function registerCreateAgent(app: Hono<AppEnv>, deps: AgentRouteDeps) {
  app.post("/agents", async (c) => {
    const input = await readJson(c, CreateAgent);
    const ctx = agentsCtx(c, deps);
    const row = await audited(c, ctx.db, async (tx, audit) => {
      const created = await createAgent({ ctx: { ...ctx, db: tx }, input });
      await audit("agent.create", created.id, agentChanges(null, created));
      return created;
    });
    c.header("Location", `/v1/agents/${row.id}`);
    return c.json(agentJson(row, { receiptsEnabled: receiptsEnabled(deps) }), 201);
  });
}
