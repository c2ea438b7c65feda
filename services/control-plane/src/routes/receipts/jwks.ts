import { type AppEnv, takesQuery } from "@gw/http";
import type { Runtime } from "@gw/runtime";
import type { Hono } from "hono";

/**
 * GET /v1/receipts/jwks, without authentication: anyone holding a receipt can verify it offline.
 * Only the public half of the key is here; `{"keys": []}` when receipts are off.
 */
export function registerJwks(app: Hono<AppEnv>, deps: Pick<Runtime, "receipts">) {
  const body = deps.receipts?.jwks ?? { keys: [] };
  // Outside the /v1 family's query rule (registered before it): it takes no query, like the rest of /v1.
  app.get("/v1/receipts/jwks", takesQuery(), (c) => {
    c.header("Cache-Control", "public, max-age=300");
    return c.json(body);
  });
}
