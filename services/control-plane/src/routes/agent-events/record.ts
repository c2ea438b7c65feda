import { AgentEvent, recordAgentEvent } from "@gw/agent-events";
import { LIMITS } from "@gw/core";
import { type AppEnv, readJson } from "@gw/http";
import type { Runtime } from "@gw/runtime";
import type { Hono } from "hono";

export function registerRecordAgentEvent(app: Hono<AppEnv>, deps: Pick<Runtime, "store">) {
  app.post("/agent-events", async (c) => {
    const input = await readJson(c, AgentEvent, LIMITS.agentEventMaxBytes);
    const result = await recordAgentEvent({
      ctx: { db: deps.store.db, tenantId: c.var.principal.tenantId },
      input,
    });
    return c.json(result, result.duplicate ? 200 : 201);
  });
}
