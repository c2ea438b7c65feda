import { notFound } from "@gw/core";
import { type AppEnv, readJson } from "@gw/http";
import { CompleteConnection, completeConnection, revokeGrant } from "@gw/vault";
import type { Hono } from "hono";
import { audited } from "../../audit.ts";
import { type ConnectionRouteDeps, connectionsCtx } from "./ctx.ts";

/**
 * POST /v1/connections/complete {code}: the signed-in console hands in the one-time code the
 * callback gave the browser (docs/connections.md, Security). The grant is stored only for the
 * person who started the connect, asking with their own token: a code completed by anyone else
 * (another person of the tenant, another tenant) is spent, stores nothing, answers as an unknown
 * code would, and the tokens it carried are revoked at the provider. 201 with the connection.
 */
export function registerCompleteConnection(app: Hono<AppEnv>, deps: ConnectionRouteDeps) {
  app.post("/connections/complete", async (c) => {
    const input = await readJson(c, CompleteConnection);
    const { tenantId, userId } = c.var.principal;
    c.header("Cache-Control", "no-store");
    const redeemed = await audited(c, deps.store.db, async (tx, audit) => {
      const r = await completeConnection(tx, { tenantId, sub: userId }, input.code);
      if (r.kind === "mine") {
        await audit("connection.create", r.credential.id, {
          credential_name: { from: null, to: r.credential.name },
          scopes: { from: null, to: r.connection.scopes.join(" ") || null },
        });
      }
      return r;
    });
    if (redeemed.kind === "mine") {
      // A reconnect replaces the grant: every replica drops the tokens it cached for the credential.
      await deps.changes.publish({ kind: "credential", tenantId, id: redeemed.credential.id });
      return c.json(redeemed.connection, 201);
    }
    if (redeemed.kind === "foreign") {
      c.var.log.warn(
        { credential_id: redeemed.owner.credentialId },
        "connect completed by another user than the one who started it: nothing stored",
      );
      const { owner, grant } = redeemed;
      await revokeGrant(connectionsCtx(deps), owner, grant).catch(() => {
        c.var.log.warn({ credential_id: owner.credentialId }, "connection revocation failed");
      });
    }
    throw notFound("connect code (it was already used, expired, or started by another user)");
  });
}
