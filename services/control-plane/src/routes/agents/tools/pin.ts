import { getAgent } from "@gw/agents";
import { type AppEnv, readJson } from "@gw/http";
import { PinInput, pinTools, unpinTools } from "@gw/tools";
import type { Hono } from "hono";
import { audited } from "../../../audit.ts";
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
    const out = await audited(c, ctx.db, async (tx, audit) => {
      const pinned = await pinTools({ ctx: { ...ctx, db: tx }, agentId, tools: input.tools });
      await audit("tools.pin", agentId, { pinned: { from: null, to: pinned.pinned } });
      return pinned;
    });
    return c.json(out);
  });
  app.delete("/agents/:id/tools/pin", async (c) => {
    const ctx = agentsCtx(c, deps);
    const agentId = c.req.param("id");
    await getAgent({ ctx, id: agentId });
    const input = await readJson(c, PinInput, undefined, { optional: true });
    const out = await audited(c, ctx.db, async (tx, audit) => {
      const unpinned = await unpinTools({ ctx: { ...ctx, db: tx }, agentId, tools: input.tools });
      await audit("tools.unpin", agentId, { pinned: { from: unpinned.unpinned, to: null } });
      return unpinned;
    });
    return c.json(out);
  });
}
