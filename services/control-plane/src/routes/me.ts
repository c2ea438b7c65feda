import { READ_BODY_SCOPE } from "@gw/auth";
import type { AppEnv } from "@gw/http";
import type { Hono } from "hono";

/** Caller identity, from the token alone: no lookup. */
export function registerMe(app: Hono<AppEnv>) {
  app.get("/me", (c) => {
    const p = c.var.principal;
    return c.json({
      tenant_id: p.tenantId,
      user_id: p.userId,
      scopes: p.scopes,
      can_read_invocation_bodies: p.scopes.includes(READ_BODY_SCOPE),
    });
  });
}
