import type { AppEnv } from "@gw/http";
import { pollInvocation, pollJson } from "@gw/invocations";
import type { Hono } from "hono";
import type { ProxyDeps } from "../deps.ts";

/** GET /v1/proxy/{id}/invocations/{inv_id}: status, and the upstream's answer once there is one. */
export function registerPoll(app: Hono<AppEnv>, deps: ProxyDeps) {
  app.get("/v1/proxy/:id/invocations/:invId", async (c) => {
    const { row, result } = await pollInvocation({
      query: deps.store.query,
      tenantId: c.var.principal.tenantId,
      agentId: c.req.param("id"),
      id: c.req.param("invId"),
    });
    return c.json(pollJson(row, result));
  });
}
