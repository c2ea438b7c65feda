import { type AppEnv, enumParam, pageOf, rangeOf } from "@gw/http";
import { INVOCATION_MODES, INVOCATION_STATUSES, invocationJson, listInvocations } from "@gw/invocations";
import type { Runtime } from "@gw/runtime";
import type { Hono } from "hono";

const SETTLEMENT = ["pending", "settled", "settlement_failed", "settled_upstream_failed"] as const;

export function registerListInvocations(app: Hono<AppEnv>, deps: Pick<Runtime, "store">) {
  app.get("/invocations", async (c) => {
    const q = c.req.query();
    const page = pageOf(q);
    const filter = {
      ...page,
      ...rangeOf(q),
      status: enumParam(q.status, "status", INVOCATION_STATUSES),
      mode: enumParam(q.mode, "mode", INVOCATION_MODES),
      settlement: enumParam(q.settlement, "settlement", SETTLEMENT),
      policy: enumParam(q.policy, "policy", ["allow", "warn"] as const),
      // Passed through unvalidated: an unknown agent simply matches nothing.
      agentId: q.agent_id,
    };
    const { rows, total } = await listInvocations({
      ctx: { db: deps.store.db, tenantId: c.var.principal.tenantId },
      filter,
    });
    return c.json({ data: rows.map(invocationJson), limit: page.limit, offset: page.offset, total });
  });
}
