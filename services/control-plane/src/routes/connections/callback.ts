import type { AppEnv } from "@gw/http";
import { ConnectFailed, finishConnection, saveConnection } from "@gw/vault";
import type { Hono } from "hono";
import { auditedAs } from "../../audit.ts";
import { type ConnectionRouteDeps, connectionsCtx } from "./ctx.ts";

/**
 * GET /v1/connections/callback?code&state: where the provider sends the person's browser back.
 * No bearer token: the single-use state is the binding to tenant, person and credential. Always a
 * redirect to the console's connections screen, `?connected=<credential name>` or
 * `?error=<short reason>`; never a token in a URL. The provider may add query parameters of its
 * own, so unknown ones are not refused here.
 */
export function registerConnectionCallback(app: Hono<AppEnv>, deps: ConnectionRouteDeps) {
  const screen = `${deps.config.publicUrl}/console/#/connections`;
  app.get("/v1/connections/callback", async (c) => {
    c.header("Cache-Control", "no-store");
    c.header("Referrer-Policy", "no-referrer");
    const query = new URL(c.req.url).searchParams;
    try {
      const done = await finishConnection(connectionsCtx(deps), query);
      await auditedAs(
        c,
        { tenantId: done.owner.tenantId, actor: done.owner.sub },
        deps.store.db,
        async (tx, audit) => {
          await saveConnection(tx, done.owner, done.grant);
          await audit("connection.create", done.credential.id, {
            credential_name: { from: null, to: done.credential.name },
            scopes: { from: null, to: done.grant.scopes },
          });
        },
      );
      return c.redirect(`${screen}?connected=${encodeURIComponent(done.credential.name)}`, 303);
    } catch (e) {
      if (!(e instanceof ConnectFailed)) throw e;
      c.var.log.info({ reason: e.reason, code: e.code }, "connection callback refused");
      return c.redirect(`${screen}?error=${e.reason}`, 303);
    }
  });
}
