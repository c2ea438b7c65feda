import { type AppEnv, readJson } from "@gw/http";
import { getPolicy, PolicyDocument, putPolicy } from "@gw/policy";
import type { Hono } from "hono";
import { audited } from "../../audit.ts";
import { type PolicyRouteDeps, policyCtx } from "./ctx.ts";

export function registerPutPolicy(app: Hono<AppEnv>, deps: PolicyRouteDeps) {
  app.put("/policy", async (c) => {
    const input = await readJson(c, PolicyDocument);
    const ctx = policyCtx(c, deps);
    const row = await audited(c, ctx.db, async (tx, audit) => {
      const txCtx = { ...ctx, db: tx };
      const before = await getPolicy({ ctx: txCtx });
      const after = await putPolicy({ ctx: txCtx, input });
      await audit("policy.replace", "policy", {
        version: { from: before?.version ?? null, to: after.version },
        document: { from: before?.document ?? null, to: after.document },
      });
      return after;
    });
    return c.json({ version: row.version, updated_at: row.updatedAt.toISOString() });
  });
}
