import { type AppEnv, readJson } from "@gw/http";
import { credentialJson, getCredential, PutCredential, rotateCredential } from "@gw/vault";
import type { Hono } from "hono";
import { type CredentialRouteDeps, vaultCtx } from "./ctx.ts";

export function registerUpdateCredential(app: Hono<AppEnv>, deps: CredentialRouteDeps) {
  app.put("/credentials/:id", async (c) => {
    const ctx = vaultCtx(c, deps);
    const id = c.req.param("id");
    // 404 before 400: a caller without the credential learns nothing from its body's errors.
    await getCredential({ ctx, id });
    const input = await readJson(c, PutCredential);
    const row = await rotateCredential({ ctx, id, input });
    return c.json(credentialJson(row));
  });
}
