import { LIMITS } from "@gw/core";
import { type AppEnv, enumParam, PAGE_QUERY, pageOf, RANGE_QUERY, rangeOf, takesQuery } from "@gw/http";
import { ACTIONS, decisionJson, listDecisions } from "@gw/policy";
import type { Hono } from "hono";
import { type PolicyRouteDeps, policyCtx } from "./ctx.ts";

/** GET /v1/policy/decisions (docs/policy.md, Decisions): newest first, every filter, `total` before paging. */
export function registerListDecisions(app: Hono<AppEnv>, deps: PolicyRouteDeps) {
  app.get("/policy/decisions", takesQuery(...PAGE_QUERY, ...RANGE_QUERY, "action", "agent_id"), async (c) => {
    const q = c.req.query();
    const page = pageOf(q, LIMITS.policyDecisionsMaxLimit);
    const { rows, total } = await listDecisions({
      ctx: policyCtx(c, deps),
      filter: {
        ...page,
        ...rangeOf(q),
        // Unlike the invocation list, deny is a value here: denials are recorded decisions.
        action: enumParam(q.action, "action", ACTIONS),
        // An unknown agent simply matches nothing.
        agentId: q.agent_id,
      },
    });
    return c.json({ data: rows.map(decisionJson), limit: page.limit, offset: page.offset, total });
  });
}
