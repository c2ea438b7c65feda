import {
  type AppEnv,
  enumParam,
  PAGE_QUERY,
  pageOf,
  RANGE_QUERY,
  rangeOf,
  takesQuery,
  textParam,
} from "@gw/http";
import {
  INVOCATION_MODES,
  INVOCATION_STATUSES,
  invocationJson,
  listInvocations,
  RECORDED_FILTERS,
} from "@gw/invocations";
import type { Runtime } from "@gw/runtime";
import type { Hono } from "hono";

const SETTLEMENT = ["pending", "settled", "settlement_failed", "settled_upstream_failed"] as const;

export function registerListInvocations(app: Hono<AppEnv>, deps: Pick<Runtime, "store">) {
  app.get(
    "/invocations",
    takesQuery(
      ...PAGE_QUERY,
      ...RANGE_QUERY,
      "status",
      "mode",
      "settlement",
      "policy",
      "agent_id",
      ...RECORDED_FILTERS.map((r) => r.param),
    ),
    async (c) => {
      const q = c.req.query();
      const page = pageOf(q);
      const filter = {
        ...page,
        ...rangeOf(q),
        status: enumParam(q.status, "status", INVOCATION_STATUSES),
        mode: enumParam(q.mode, "mode", INVOCATION_MODES),
        settlement: enumParam(q.settlement, "settlement", SETTLEMENT),
        policy: enumParam(q.policy, "policy", ["allow", "warn"] as const),
        // Any other string simply matches nothing; a NUL or an over-long value is a 400.
        agentId: textParam(q.agent_id, "agent_id", 128),
        // The protocols' recorded fields (`method`, `tool`, `a2a_task_id`, ...): exact values, like agent_id.
        recorded: Object.fromEntries(
          RECORDED_FILTERS.map((r) => [r.param, textParam(q[r.param], r.param, r.maxBytes)]),
        ),
      };
      const { rows, total } = await listInvocations({
        ctx: { db: deps.store.db, tenantId: c.var.principal.tenantId },
        filter,
      });
      return c.json({ data: rows.map(invocationJson), limit: page.limit, offset: page.offset, total });
    },
  );
}
