import { type AppEnv, PAGE_QUERY, pageOf, takesQuery } from "@gw/http";
import { credentialJson, listCredentials } from "@gw/vault";
import type { Hono } from "hono";
import { type CredentialRouteDeps, vaultCtx } from "./ctx.ts";

export function registerListCredentials(app: Hono<AppEnv>, deps: CredentialRouteDeps) {
  app.get("/credentials", takesQuery(...PAGE_QUERY), async (c) => {
    const page = pageOf(c.req.query());
    const { rows, total } = await listCredentials({ ctx: vaultCtx(c, deps), query: page });
    return c.json({
      data: rows.map((r) => credentialJson(r, deps.config.publicUrl)),
      limit: page.limit,
      offset: page.offset,
      total,
    });
  });
}
