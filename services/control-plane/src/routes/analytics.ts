import { ANALYTICS_BUCKETS, getAnalytics } from "@gw/analytics";
import { type AppEnv, enumParam, RANGE_QUERY, takesQuery, timeParam } from "@gw/http";
import type { Runtime } from "@gw/runtime";
import type { Hono } from "hono";

export function registerAnalytics(app: Hono<AppEnv>, deps: Pick<Runtime, "store">) {
  app.get("/analytics", takesQuery(...RANGE_QUERY, "bucket", "agent_id"), async (c) => {
    const q = c.req.query();
    const body = await getAnalytics({
      ctx: {
        db: deps.store.db,
        query: deps.store.query,
        transaction: deps.store.transaction,
        tenantId: c.var.principal.tenantId,
      },
      input: {
        since: timeParam(q.since, "since"),
        until: timeParam(q.until, "until"),
        bucket: enumParam(q.bucket, "bucket", ANALYTICS_BUCKETS),
        // An empty value is a filter naming no agent, not an absent filter.
        agentId: q.agent_id,
      },
    });
    return c.json(body);
  });
}
