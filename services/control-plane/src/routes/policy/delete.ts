import type { AppEnv } from "@gw/http";
import { deletePolicy, getPolicy } from "@gw/policy";
import type { Hono } from "hono";
import { audited } from "../../audit.ts";
import { type PolicyRouteDeps, policyCtx } from "./ctx.ts";

/** DELETE /v1/policy → 204: back to no policy document (docs/policy.md). */
export function registerDeletePolicy(app: Hono<AppEnv>, deps: PolicyRouteDeps) {
  app.delete("/policy", async (c) => {
    const ctx = policyCtx(c, deps);
    await audited(c, ctx.db, async (tx, audit) => {
      const txCtx = { ...ctx, db: tx };
      const before = await getPolicy({ ctx: txCtx });
      await deletePolicy({ ctx: txCtx });
      // Deleting when there is no document changes nothing and records nothing (it is idempotent).
      if (before?.document)
        await audit("policy.delete", "policy", { document: { from: before.document, to: null } });
    });
    return c.body(null, 204);
  });
}
