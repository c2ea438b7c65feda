import type { AppEnv } from "@gw/http";
import type { SettlementCtx } from "@gw/payments";
import type { Runtime } from "@gw/runtime";
import type { Context } from "hono";

export type SettlementRouteDeps = Pick<Runtime, "store" | "ssrf">;

/** The domain context of one request: the caller's tenant, never one taken from input. */
export function settlementCtx(c: Context<AppEnv>, deps: SettlementRouteDeps): SettlementCtx {
  return { db: deps.store.db, tenantId: c.var.principal.tenantId, ssrf: deps.ssrf };
}
