import { notFound } from "@gw/core";
import type { AppEnv } from "@gw/http";
import { approvalJson, getApproval } from "@gw/policy";
import type { Hono } from "hono";
import { type ApprovalRouteDeps, approvalsCtx } from "./ctx.ts";

/** GET /v1/approvals/{id}: another tenant's approval is 404 like a missing one. */
export function registerGetApproval(app: Hono<AppEnv>, deps: ApprovalRouteDeps) {
  app.get("/approvals/:id", async (c) => {
    const row = await getApproval({ ctx: approvalsCtx(c, deps), id: c.req.param("id") });
    if (!row) throw notFound("approval");
    return c.json(approvalJson(row));
  });
}
