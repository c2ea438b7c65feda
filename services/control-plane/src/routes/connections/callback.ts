import type { AppEnv } from "@gw/http";
import { ConnectFailed, finishConnection, handOff } from "@gw/vault";
import type { Hono } from "hono";
import { type ConnectionRouteDeps, connectionsCtx } from "./ctx.ts";

/**
 * GET /v1/connections/callback?code&state: where the provider sends the person's browser back.
 * No bearer token: the single-use state names tenant, person and credential, and the code is
 * exchanged here; but whoever's browser followed the link is not known here, so the grant is not
 * stored: it is parked under a one-time code the browser carries to the console
 * (`#/connections?complete=<code>`), where the signed-in person completes it with their own token
 * (`POST /v1/connections/complete`; docs/connections.md, Security). A failure redirects with
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
      const code = await handOff(deps.store.db, done.owner, done.grant);
      return c.redirect(`${screen}?complete=${code}`, 303);
    } catch (e) {
      if (!(e instanceof ConnectFailed)) throw e;
      c.var.log.info({ reason: e.reason, code: e.code }, "connection callback refused");
      return c.redirect(`${screen}?error=${e.reason}`, 303);
    }
  });
}
