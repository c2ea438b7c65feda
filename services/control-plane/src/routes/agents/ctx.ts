import type { AgentsCtx } from "@gw/agents";
import type { AppEnv } from "@gw/http";
import type { Runtime } from "@gw/runtime";
import type { Context } from "hono";

export type AgentRouteDeps = Pick<Runtime, "store" | "ssrf" | "features">;

/** The domain context of one request: the caller's tenant, never one taken from input. */
export function agentsCtx(c: Context<AppEnv>, deps: AgentRouteDeps): AgentsCtx {
  return {
    db: deps.store.db,
    tenantId: c.var.principal.tenantId,
    userId: c.var.principal.userId,
    ssrf: deps.ssrf,
  };
}

export const receiptsEnabled = (deps: AgentRouteDeps) => deps.features.receipts;
