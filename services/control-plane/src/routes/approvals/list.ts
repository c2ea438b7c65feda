import { type AppEnv, enumParam, PAGE_QUERY, pageOf, takesQuery } from "@gw/http";
import { APPROVAL_STATUSES, approvalJson, listApprovals } from "@gw/policy";
import type { Hono } from "hono";
import { type ApprovalRouteDeps, approvalsCtx } from "./ctx.ts";

/** GET /v1/approvals?status=&agent_id=&limit=&offset=: newest first, `total` before paging. */
export function registerListApprovals(app: Hono<AppEnv>, deps: ApprovalRouteDeps) {
  app.get("/approvals", takesQuery(...PAGE_QUERY, "status", "agent_id"), async (c) => {
    const q = c.req.query();
    const page = pageOf(q);
    const status = enumParam(q.status, "status", APPROVAL_STATUSES);
    const { rows, total } = await listApprovals({
      ctx: approvalsCtx(c, deps),
      filter: {
        ...page,
        ...(status ? { status } : {}),
        // An unknown agent simply matches nothing.
        ...(q.agent_id ? { agentId: q.agent_id } : {}),
      },
    });
    return c.json({ data: rows.map(approvalJson), limit: page.limit, offset: page.offset, total });
  });
}
