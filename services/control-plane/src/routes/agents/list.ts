import { AGENT_PROTOCOLS, agentJson, listAgents } from "@gw/agents";
import { type AppEnv, enumParam, PAGE_QUERY, pageOf, takesQuery } from "@gw/http";
import type { Hono } from "hono";
import { type AgentRouteDeps, agentsCtx, receiptsEnabled } from "./ctx.ts";

export function registerListAgents(app: Hono<AppEnv>, deps: AgentRouteDeps) {
  app.get("/agents", takesQuery(...PAGE_QUERY, "protocol"), async (c) => {
    const q = c.req.query();
    const page = pageOf(q);
    const protocol = enumParam(q.protocol, "protocol", AGENT_PROTOCOLS);
    const { rows, total } = await listAgents({ ctx: agentsCtx(c, deps), query: { ...page, protocol } });
    const opts = { receiptsEnabled: receiptsEnabled(deps) };
    return c.json({
      data: rows.map((r) => agentJson(r, opts)),
      limit: page.limit,
      offset: page.offset,
      total,
    });
  });
}
