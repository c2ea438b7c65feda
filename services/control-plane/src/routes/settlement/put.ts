import { type AppEnv, readJson } from "@gw/http";
import { PutSettlementConfig, putSettlementConfig, settlementConfigJson } from "@gw/payments";
import type { Hono } from "hono";
import { type SettlementRouteDeps, settlementCtx } from "./ctx.ts";

export function registerPutSettlementConfig(app: Hono<AppEnv>, deps: SettlementRouteDeps) {
  app.put("/settlement/config", async (c) => {
    const input = await readJson(c, PutSettlementConfig);
    const row = await putSettlementConfig({ ctx: settlementCtx(c, deps), input });
    return c.json(settlementConfigJson(row));
  });
}
