import type { AppEnv } from "@gw/http";
import { getSettlementConfig, settlementConfigJson } from "@gw/payments";
import type { Hono } from "hono";
import { type SettlementRouteDeps, settlementCtx } from "./ctx.ts";

export function registerGetSettlementConfig(app: Hono<AppEnv>, deps: SettlementRouteDeps) {
  app.get("/settlement/config", async (c) => {
    const row = await getSettlementConfig({ ctx: settlementCtx(c, deps) });
    return c.json(settlementConfigJson(row));
  });
}
