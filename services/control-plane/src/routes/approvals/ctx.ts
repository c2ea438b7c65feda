import { DomainError } from "@gw/core";
import type { AppEnv } from "@gw/http";
import type { ApprovalsCtx } from "@gw/policy";
import type { Runtime } from "@gw/runtime";
import type { Context } from "hono";

export type ApprovalRouteDeps = Pick<Runtime, "store" | "config">;

/** The scope a person needs to decide approvals (docs/policy.md "Approvals"). */
export const DECIDE_SCOPE = "approvals:decide";

/** The domain context of one request: the caller's tenant, never one taken from input. */
export function approvalsCtx(c: Context<AppEnv>, deps: ApprovalRouteDeps): ApprovalsCtx {
  return { query: deps.store.query, tenantId: c.var.principal.tenantId };
}

export function requireDecideScope(c: Context<AppEnv>): void {
  if (!c.var.principal.scopes.includes(DECIDE_SCOPE)) {
    throw new DomainError("forbidden", `scope ${DECIDE_SCOPE} required`);
  }
}
