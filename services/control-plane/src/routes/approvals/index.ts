import type { AppEnv } from "@gw/http";
import type { Hono } from "hono";
import type { ApprovalRouteDeps } from "./ctx.ts";
import { registerDecideApproval } from "./decide.ts";
import { registerGetApproval } from "./get.ts";
import { registerListApprovals } from "./list.ts";

/** Approvals of calls held by `require_approval` rules (docs/policy.md "Approvals"). */
export function registerApprovals(app: Hono<AppEnv>, deps: ApprovalRouteDeps) {
  registerListApprovals(app, deps);
  registerGetApproval(app, deps);
  registerDecideApproval(app, deps);
}
