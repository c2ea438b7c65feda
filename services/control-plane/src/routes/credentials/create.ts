import { type AppEnv, readJson } from "@gw/http";
import { CreateCredential, createCredential, credentialJson } from "@gw/vault";
import type { Hono } from "hono";
import { type CredentialRouteDeps, vaultCtx } from "./ctx.ts";

export function registerCreateCredential(app: Hono<AppEnv>, deps: CredentialRouteDeps) {
  app.post("/credentials", async (c) => {
    const input = await readJson(c, CreateCredential);
    const row = await createCredential({ ctx: vaultCtx(c, deps), input });
    c.header("Location", `/v1/credentials/${row.id}`);
    return c.json(credentialJson(row), 201);
  });
}
