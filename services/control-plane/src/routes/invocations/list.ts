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
import { INVOCATION_MODES, INVOCATION_STATUSES, invocationJson, listInvocations } from "@gw/invocations";
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
      "a2a_task_id",
      "method",
      "tool",
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
        // Every invocation of one A2A task, oldest first (docs/a2a.md).
        a2aTaskId: textParam(q.a2a_task_id, "a2a_task_id", 256),
        // What was called (MCP or A2A method, MCP tool): exact values, like agent_id.
        method: textParam(q.method, "method", 128),
        tool: textParam(q.tool, "tool", 256),
      };
      const { rows, total } = await listInvocations({
        ctx: { db: deps.store.db, tenantId: c.var.principal.tenantId },
        filter,
      });
      return c.json({ data: rows.map(invocationJson), limit: page.limit, offset: page.offset, total });
    },
  );
}
