import { summarizeAgentEvents } from "@gw/agent-events";
import { invalid } from "@gw/core";
import { type AppEnv, RANGE_QUERY, takesQuery, timeParam } from "@gw/http";
import type { Runtime } from "@gw/runtime";
import type { Hono } from "hono";

export function registerAgentEventSummary(app: Hono<AppEnv>, deps: Pick<Runtime, "store">) {
  app.get("/agent-events/summary", takesQuery("agent_id", ...RANGE_QUERY), async (c) => {
    const q = c.req.query();
    if (!q.agent_id) throw invalid("agent_id is required");
    const body = await summarizeAgentEvents({
      ctx: { db: deps.store.db, tenantId: c.var.principal.tenantId },
      input: { agentId: q.agent_id, since: timeParam(q.since, "since"), until: timeParam(q.until, "until") },
    });
    return c.json(body);
  });
}
