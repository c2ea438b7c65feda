import type { AppEnv } from "@gw/http";
import type { PolicyCtx } from "@gw/policy";
import type { Runtime } from "@gw/runtime";
import type { Context } from "hono";

export type PolicyRouteDeps = Pick<Runtime, "store" | "ssrf" | "quotas">;

/** The domain context of one request: the caller's tenant, never one taken from input. */
export function policyCtx(c: Context<AppEnv>, deps: PolicyRouteDeps): PolicyCtx {
  return { db: deps.store.db, tenantId: c.var.principal.tenantId, ssrf: deps.ssrf };
}
