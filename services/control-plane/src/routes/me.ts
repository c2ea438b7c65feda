import { meJson } from "@gw/auth";
import type { AppEnv } from "@gw/http";
import type { Hono } from "hono";

/** Caller identity, from the token alone: no lookup. */
export function registerMe(app: Hono<AppEnv>) {
  app.get("/me", (c) => c.json(meJson(c.var.principal)));
}
