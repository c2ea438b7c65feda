import { getAnalyticsSummary } from "@gw/analytics";
import { type AppEnv, RANGE_QUERY, takesQuery, timeParam } from "@gw/http";
import type { Runtime } from "@gw/runtime";
import type { Hono } from "hono";

/** GET /v1/analytics/summary: the tenant's calls over a window, all agents together. */
export function registerAnalyticsSummary(app: Hono<AppEnv>, deps: Pick<Runtime, "store">) {
  app.get("/analytics/summary", takesQuery(...RANGE_QUERY), async (c) => {
    const q = c.req.query();
    const body = await getAnalyticsSummary({
      ctx: { db: deps.store.db, query: deps.store.query, tenantId: c.var.principal.tenantId },
      input: { since: timeParam(q.since, "since"), until: timeParam(q.until, "until") },
    });
    return c.json(body);
  });
}
