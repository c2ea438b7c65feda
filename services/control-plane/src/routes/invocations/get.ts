import { READ_BODY_SCOPE } from "@gw/auth";
import type { AppEnv } from "@gw/http";
import { getInvocation, invocationDetailJson } from "@gw/invocations";
import type { Runtime } from "@gw/runtime";
import type { Hono } from "hono";

export function registerGetInvocation(app: Hono<AppEnv>, deps: Pick<Runtime, "store">) {
  app.get("/invocations/:id", async (c) => {
    const row = await getInvocation({
      ctx: { db: deps.store.db, tenantId: c.var.principal.tenantId },
      id: c.req.param("id"),
    });
    return c.json(
      invocationDetailJson(row, { canReadBodies: c.var.principal.scopes.includes(READ_BODY_SCOPE) }),
    );
  });
}
