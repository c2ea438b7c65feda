import type { AppEnv } from "@gw/http";
import { credentialJson, getCredential } from "@gw/vault";
import type { Hono } from "hono";
import { type CredentialRouteDeps, vaultCtx } from "./ctx.ts";

export function registerGetCredential(app: Hono<AppEnv>, deps: CredentialRouteDeps) {
  app.get("/credentials/:id", async (c) => {
    const row = await getCredential({ ctx: vaultCtx(c, deps), id: c.req.param("id") });
    return c.json(credentialJson(row, deps.config.publicUrl));
  });
}
