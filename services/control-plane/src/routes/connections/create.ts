import { type AppEnv, readJson } from "@gw/http";
import { CreateConnection, startConnection } from "@gw/vault";
import type { Hono } from "hono";
import { type ConnectionRouteDeps, connectionsCtx } from "./ctx.ts";

/**
 * POST /v1/connections: starts a connect for the caller themself (any authenticated caller).
 * Nothing is stored but the pending state; the grant arrives with the provider's redirect back.
 */
export function registerCreateConnection(app: Hono<AppEnv>, deps: ConnectionRouteDeps) {
  app.post("/connections", async (c) => {
    const input = await readJson(c, CreateConnection);
    const { tenantId, userId } = c.var.principal;
    const started = await startConnection(
      connectionsCtx(deps),
      { tenantId, sub: userId },
      input.credential_id,
    );
    c.header("Cache-Control", "no-store");
    return c.json(started, 201);
  });
}
