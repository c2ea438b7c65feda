import type { AppEnv } from "@gw/http";
import type { Hono } from "hono";
import type { PolicyRouteDeps } from "./ctx.ts";
import { registerListDecisions } from "./decisions.ts";
import { registerDeletePolicy } from "./delete.ts";
import { registerGetPolicy } from "./get.ts";
import { registerPutPolicy } from "./put.ts";
import { registerQuotas } from "./quotas.ts";

export function registerPolicy(app: Hono<AppEnv>, deps: PolicyRouteDeps) {
  registerGetPolicy(app, deps);
  registerPutPolicy(app, deps);
  registerDeletePolicy(app, deps);
  registerListDecisions(app, deps);
  registerQuotas(app, deps);
}
