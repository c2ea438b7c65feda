import { queryOf } from "@gw/audit";
import { conflict, notFound } from "@gw/core";
import { type AppEnv, readJson } from "@gw/http";
import { ApprovalDecisionInput, approvalJson, decideApproval } from "@gw/policy";
import type { Context, Hono } from "hono";
import { audited } from "../../audit.ts";
import { type ApprovalRouteDeps, approvalsCtx, requireDecideScope } from "./ctx.ts";

/**
 * POST /v1/approvals/{id}/approve and /deny `{reason?}` (one handler, two verbs): scope
 * approvals:decide (403), another tenant's is 404, one that is not pending (decided, used or
 * expired) is 409. An approval lets the same caller's identical call pass once within
 * GW_APPROVAL_TTL_SECONDS.
 */
export function registerDecideApproval(app: Hono<AppEnv>, deps: ApprovalRouteDeps) {
  for (const [verb, status] of [
    ["approve", "approved"],
    ["deny", "denied"],
  ] as const) {
    app.post(`/approvals/:id/${verb}`, async (c) => {
      requireDecideScope(c);
      const input = await optionalBody(c);
      const id = c.req.param("id");
      const row = await audited(c, deps.store.db, async (tx, audit) => {
        const decided = await decideApproval({
          ctx: { ...approvalsCtx(c, deps), query: queryOf(tx) },
          id,
          input: {
            status,
            reason: input.reason ?? null,
            by: c.var.principal.userId,
            usableSeconds: deps.config.GW_APPROVAL_TTL_SECONDS,
          },
        });
        if (decided === undefined) throw notFound("approval");
        if (decided === null) throw conflict("approval is not pending");
        await audit(`approval.${verb}`, id, {
          status: { from: "pending", to: decided.status },
          reason: { from: null, to: decided.reason },
        });
        return decided;
      });
      return c.json(approvalJson(row));
    });
  }
}

/** The body is optional: none (or an empty one) means no reason. */
async function optionalBody(c: Context<AppEnv>) {
  const length = c.req.header("content-length");
  const chunked = c.req.header("transfer-encoding") !== undefined;
  if (!chunked && (length === undefined || length === "0")) return {};
  return readJson(c, ApprovalDecisionInput);
}
