import type { AppEnv } from "@gw/http";
import { deleteCredential } from "@gw/vault";
import type { Hono } from "hono";
import { type CredentialRouteDeps, vaultCtx } from "./ctx.ts";

export function registerDeleteCredential(app: Hono<AppEnv>, deps: CredentialRouteDeps) {
  app.delete("/credentials/:id", async (c) => {
    await deleteCredential({ ctx: vaultCtx(c, deps), id: c.req.param("id") });
    return c.body(null, 204);
  });
}
