import type { AppEnv } from "@gw/http";
import { deleteCredential, getCredential } from "@gw/vault";
import type { Hono } from "hono";
import { audited } from "../../audit.ts";
import { credentialChanges } from "./audit.ts";
import { type CredentialRouteDeps, vaultCtx } from "./ctx.ts";

export function registerDeleteCredential(app: Hono<AppEnv>, deps: CredentialRouteDeps) {
  app.delete("/credentials/:id", async (c) => {
    const ctx = vaultCtx(c, deps);
    const id = c.req.param("id");
    await audited(c, ctx.db, async (tx, audit) => {
      const txCtx = { ...ctx, db: tx };
      const before = await getCredential({ ctx: txCtx, id });
      await deleteCredential({ ctx: txCtx, id });
      await audit("credential.delete", id, credentialChanges(before, null, false));
    });
    return c.body(null, 204);
  });
}
