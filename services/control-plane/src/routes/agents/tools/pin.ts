import { getAgent } from "@gw/agents";
import { type AppEnv, readJson } from "@gw/http";
import { PinInput, pinTools, unpinTools } from "@gw/tools";
import type { Hono } from "hono";
import { type AgentRouteDeps, agentsCtx } from "../ctx.ts";

/**
 * POST and DELETE /v1/agents/{id}/tools/pin. The write is announced on the change bus by the
 * control plane's write middleware (changes.ts): effective on the next call on every replica.
 */
export function registerPinTools(app: Hono<AppEnv>, deps: AgentRouteDeps) {
  app.post("/agents/:id/tools/pin", async (c) => {
    const ctx = agentsCtx(c, deps);
    const agentId = c.req.param("id");
    // 404 before 400: a caller without the agent learns nothing from its body's errors.
    await getAgent({ ctx, id: agentId });
    const input = await readJson(c, PinInput, undefined, { optional: true });
    return c.json(await pinTools({ ctx, agentId, tools: input.tools }));
  });
  app.delete("/agents/:id/tools/pin", async (c) => {
    const ctx = agentsCtx(c, deps);
    const agentId = c.req.param("id");
    await getAgent({ ctx, id: agentId });
    const input = await readJson(c, PinInput, undefined, { optional: true });
    return c.json(await unpinTools({ ctx, agentId, tools: input.tools }));
  });
}
