import type { AppEnv } from "@gw/http";
import { deletePolicy } from "@gw/policy";
import type { Hono } from "hono";
import { type PolicyRouteDeps, policyCtx } from "./ctx.ts";

/** DELETE /v1/policy → 204: back to no policy document (docs/policy.md). */
export function registerDeletePolicy(app: Hono<AppEnv>, deps: PolicyRouteDeps) {
  app.delete("/policy", async (c) => {
    await deletePolicy({ ctx: policyCtx(c, deps) });
    return c.body(null, 204);
  });
}
