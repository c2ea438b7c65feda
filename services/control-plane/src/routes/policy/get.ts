import type { AppEnv } from "@gw/http";
import { getPolicy, policyJson } from "@gw/policy";
import type { Hono } from "hono";
import { type PolicyRouteDeps, policyCtx } from "./ctx.ts";

export function registerGetPolicy(app: Hono<AppEnv>, deps: PolicyRouteDeps) {
  app.get("/policy", async (c) => c.json(policyJson(await getPolicy({ ctx: policyCtx(c, deps) }))));
}
