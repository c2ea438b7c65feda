import { type AppEnv, readJson } from "@gw/http";
import { PolicyDocument, putPolicy } from "@gw/policy";
import type { Hono } from "hono";
import { type PolicyRouteDeps, policyCtx } from "./ctx.ts";

export function registerPutPolicy(app: Hono<AppEnv>, deps: PolicyRouteDeps) {
  app.put("/policy", async (c) => {
    const input = await readJson(c, PolicyDocument);
    const row = await putPolicy({ ctx: policyCtx(c, deps), input });
    return c.json({ version: row.version, updated_at: row.updatedAt.toISOString() });
  });
}
