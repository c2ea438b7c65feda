import { type AppEnv, takesQuery } from "@gw/http";
import { listConnections } from "@gw/vault";
import type { Hono } from "hono";
import type { ConnectionRouteDeps } from "./ctx.ts";

/** GET /v1/connections: the caller's own connections (another person's are never listed). */
export function registerListConnections(app: Hono<AppEnv>, deps: ConnectionRouteDeps) {
  app.get("/connections", takesQuery(), async (c) => {
    const { tenantId, userId } = c.var.principal;
    const data = await listConnections(deps.store.db, deps.keyring, { tenantId, sub: userId });
    return c.json({ data });
  });
}
