import { diffChanges } from "@gw/audit";
import { type AppEnv, readJson } from "@gw/http";
import {
  PutSettlementConfig,
  putSettlementConfig,
  settlementConfigJson,
  settlementConfigRepo,
} from "@gw/payments";
import type { Hono } from "hono";
import { audited } from "../../audit.ts";
import { type SettlementRouteDeps, settlementCtx } from "./ctx.ts";

export function registerPutSettlementConfig(app: Hono<AppEnv>, deps: SettlementRouteDeps) {
  app.put("/settlement/config", async (c) => {
    const input = await readJson(c, PutSettlementConfig);
    const ctx = settlementCtx(c, deps);
    const row = await audited(c, ctx.db, async (tx, audit) => {
      const txCtx = { ...ctx, db: tx };
      const before = await settlementConfigRepo.get(tx, ctx.tenantId);
      const after = await putSettlementConfig({ ctx: txCtx, input });
      const view = (r: typeof before) => {
        if (!r) return null;
        const { updated_at: _u, ...fields } = settlementConfigJson(r);
        return fields;
      };
      await audit("settlement.replace", "settlement", diffChanges(view(before), view(after)));
      return after;
    });
    return c.json(settlementConfigJson(row));
  });
}
