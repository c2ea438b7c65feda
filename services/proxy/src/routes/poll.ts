import { READ_BODY_SCOPE } from "@gw/auth";
import type { AppEnv } from "@gw/http";
import { canReadPolledBody, pollInvocation, pollJson } from "@gw/invocations";
import type { Hono } from "hono";
import type { ProxyDeps } from "../deps.ts";

/** GET /v1/proxy/{id}/invocations/{inv_id}: status, and the upstream's answer once there is one. */
export function registerPoll(app: Hono<AppEnv>, deps: ProxyDeps) {
  app.get("/v1/proxy/:id/invocations/:invId", async (c) => {
    const { principal } = c.var;
    const { row, createdBy, result } = await pollInvocation({
      query: deps.store.query,
      tenantId: principal.tenantId,
      agentId: c.req.param("id"),
      id: c.req.param("invId"),
    });
    const canReadBody = canReadPolledBody(createdBy, {
      userId: principal.userId,
      holdsReadBodyScope: principal.scopes.includes(READ_BODY_SCOPE),
    });
    return c.json(pollJson(row, result, { canReadBody }));
  });
}
