import { diffChanges } from "@gw/audit";
import type { AppEnv } from "@gw/http";
import { listTools, type RefreshDeps, refreshTools } from "@gw/tools";
import { bearerOf } from "@gw/vault";
import type { Hono } from "hono";
import { audited } from "../../../audit.ts";
import { type AgentRouteDeps, agentsCtx } from "../ctx.ts";

/**
 * POST /v1/agents/{id}/tools/refresh: the gateway lists the server's tools itself (docs/tools.md).
 * A token-exchange credential exchanges the caller's own bearer token, as if they had called.
 */
export function registerRefreshTools(app: Hono<AppEnv>, deps: AgentRouteDeps, refresh: RefreshDeps) {
  app.post("/agents/:id/tools/refresh", async (c) => {
    const ctx = agentsCtx(c, deps);
    const subjectToken = bearerOf(c.req.header("authorization"));
    const agentId = c.req.param("id");
    const before = await listTools({ ctx, agentId });
    const out = await refreshTools({ ctx, agentId, deps: refresh, subjectToken });
    // The catalog learns each page as it arrives, as it does from the data plane's lists, with no
    // transaction held open across the upstream's answers: the event follows the completed refresh.
    const digests = (tools: typeof out.data) => Object.fromEntries(tools.map((t) => [t.name, t.digest]));
    await audited(c, ctx.db, (_tx, audit) =>
      audit(
        "tools.refresh",
        agentId,
        diffChanges({ tools: digests(before.data) }, { tools: digests(out.data) }),
      ),
    );
    return c.json(out);
  });
}
