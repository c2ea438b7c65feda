import { type AppEnv, takesQuery, textParam } from "@gw/http";
import { compilePolicy, getPolicy, PolicyDocument, quotaRulesOf, quotaUseJson } from "@gw/policy";
import type { Hono } from "hono";
import * as v from "valibot";
import { type PolicyRouteDeps, policyCtx } from "./ctx.ts";

/** Longest `key` accepted: a long key value is counted under its digest, so it can be asked for. */
const KEY_MAX_BYTES = 16_384;

/**
 * GET /v1/policy/quotas (docs/policy.md "Quotas"): the current windows of the tenant's `limit`
 * rules. With `key`, one counter per rule for that key value (used 0 when untouched); without
 * it, the counters with use (at most 100 per rule).
 */
export function registerQuotas(app: Hono<AppEnv>, deps: PolicyRouteDeps) {
  app.get("/policy/quotas", takesQuery("key"), async (c) => {
    const q = c.req.query();
    const key = textParam(q.key, "key", KEY_MAX_BYTES);
    const ctx = policyCtx(c, deps);
    const row = await getPolicy({ ctx });
    if (!row || row.document === null) return c.json({ data: [] });
    const rules = quotaRulesOf(compilePolicy(v.parse(PolicyDocument, row.document), row.version));
    if (rules.length === 0) return c.json({ data: [] });
    const used = await deps.quotas.usage(ctx.tenantId, row.version, rules, key);
    return c.json({ data: used.map(quotaUseJson) });
  });
}
