import { type AppEnv, readJson } from "@gw/http";
import { credentialJson, getCredential, PutCredential, rotateCredential } from "@gw/vault";
import type { Hono } from "hono";
import { audited } from "../../audit.ts";
import { credentialChanges } from "./audit.ts";
import { type CredentialRouteDeps, vaultCtx } from "./ctx.ts";

export function registerUpdateCredential(app: Hono<AppEnv>, deps: CredentialRouteDeps) {
  app.put("/credentials/:id", async (c) => {
    const ctx = vaultCtx(c, deps);
    const id = c.req.param("id");
    // 404 before 400: a caller without the credential learns nothing from its body's errors.
    await getCredential({ ctx, id });
    const input = await readJson(c, PutCredential);
    const row = await audited(c, ctx.db, async (tx, audit) => {
      const txCtx = { ...ctx, db: tx };
      const before = await getCredential({ ctx: txCtx, id });
      const after = await rotateCredential({ ctx: txCtx, id, input });
      await audit("credential.rotate", id, credentialChanges(before, after, true));
      return after;
    });
    return c.json(credentialJson(row, deps.config.publicUrl));
  });
}
