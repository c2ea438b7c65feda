import { type AppEnv, readJson } from "@gw/http";
import { CreateCredential, createCredential, credentialJson } from "@gw/vault";
import type { Hono } from "hono";
import { audited } from "../../audit.ts";
import { credentialChanges } from "./audit.ts";
import { type CredentialRouteDeps, vaultCtx } from "./ctx.ts";

export function registerCreateCredential(app: Hono<AppEnv>, deps: CredentialRouteDeps) {
  app.post("/credentials", async (c) => {
    const input = await readJson(c, CreateCredential);
    const ctx = vaultCtx(c, deps);
    const row = await audited(c, ctx.db, async (tx, audit) => {
      const created = await createCredential({ ctx: { ...ctx, db: tx }, input });
      await audit("credential.create", created.id, credentialChanges(null, created, true));
      return created;
    });
    c.header("Location", `/v1/credentials/${row.id}`);
    return c.json(credentialJson(row, deps.config.publicUrl), 201);
  });
}
