import type { AppEnv } from "@gw/http";
import { getInvocation } from "@gw/invocations";
import { receiptJson, receiptOf } from "@gw/receipts";
import type { Runtime } from "@gw/runtime";
import type { Hono } from "hono";

/** GET /v1/invocations/{id}/receipt: always mounted; another tenant's invocation is a 404. */
export function registerGetReceipt(app: Hono<AppEnv>, deps: Pick<Runtime, "store" | "features">) {
  app.get("/invocations/:id/receipt", async (c) => {
    const ctx = { db: deps.store.db, tenantId: c.var.principal.tenantId };
    const row = await getInvocation({ ctx, id: c.req.param("id") });
    const receipt = await receiptOf({ ctx, subjectId: row.id });
    return c.json(receiptJson(row.id, receipt, deps.features.receipts));
  });
}
