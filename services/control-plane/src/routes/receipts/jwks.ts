import type { AppEnv } from "@gw/http";
import type { Runtime } from "@gw/runtime";
import type { Hono } from "hono";

/**
 * GET /v1/receipts/jwks, without authentication: anyone holding a receipt can verify it offline.
 * Only the public half of the key is here; `{"keys": []}` when receipts are off.
 */
export function registerJwks(app: Hono<AppEnv>, deps: Pick<Runtime, "receipts">) {
  const body = deps.receipts?.jwks ?? { keys: [] };
  app.get("/v1/receipts/jwks", (c) => {
    c.header("Cache-Control", "public, max-age=300");
    return c.json(body);
  });
}
