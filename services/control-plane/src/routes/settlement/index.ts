import type { AppEnv } from "@gw/http";
import type { Hono } from "hono";
import type { SettlementRouteDeps } from "./ctx.ts";
import { registerGetSettlementConfig } from "./get.ts";
import { registerPutSettlementConfig } from "./put.ts";

export function registerSettlement(app: Hono<AppEnv>, deps: SettlementRouteDeps) {
  registerGetSettlementConfig(app, deps);
  registerPutSettlementConfig(app, deps);
}
