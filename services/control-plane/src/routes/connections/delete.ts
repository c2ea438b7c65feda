import { notFound } from "@gw/core";
import type { AppEnv } from "@gw/http";
import { removeConnection } from "@gw/vault";
import type { Hono } from "hono";
import { audited } from "../../audit.ts";
import { type ConnectionRouteDeps, connectionsCtx } from "./ctx.ts";

/**
 * DELETE /v1/connections/{credential_id}: removes the caller's own grant (404 when they have
 * none), then revokes its tokens at the provider (RFC 7009) when the credential names a
 * revocation endpoint. A revocation that fails is logged, not answered: the grant is gone here.
 */
export function registerDeleteConnection(app: Hono<AppEnv>, deps: ConnectionRouteDeps) {
  app.delete("/connections/:credential_id", async (c) => {
    const { tenantId, userId } = c.var.principal;
    const owner = { tenantId, sub: userId, credentialId: c.req.param("credential_id") };
    const removed = await audited(c, deps.store.db, async (tx, audit) => {
      const r = await removeConnection(tx, owner);
      if (!r) throw notFound("connection");
      await audit("connection.delete", owner.credentialId, {});
      return r;
    });
    await removed.revoke(connectionsCtx(deps)).catch(() => {
      c.var.log.warn({ credential_id: owner.credentialId }, "connection revocation failed");
    });
    return c.body(null, 204);
  });
}
