import { type Db, type DecisionFilter, policyRepo } from "@gw/db";
import { type SsrfPolicy, validateUpstreamUrl } from "@gw/upstream";
import { compilePolicy } from "./compile.ts";
import type { PolicyDocument } from "./schema.ts";

export type PolicyCtx = {
  db: Db;
  tenantId: string;
  ssrf: { policy: SsrfPolicy; allowHttp: boolean };
};

/** The tenant's document; version 0 and no rules when it has none. */
export async function getPolicy({ ctx }: { ctx: Pick<PolicyCtx, "db" | "tenantId"> }) {
  return policyRepo.get(ctx.db, ctx.tenantId);
}

/**
 * Replaces the tenant's document (already shape-checked). Classifier URLs pass the same write-time
 * SSRF check as upstream URLs; the dial-time guard checks them again on every call. On any 400
 * the stored document is unchanged. The route's write announcement (the change bus) makes it
 * effective on the next call.
 */
export async function putPolicy({ ctx, input }: { ctx: PolicyCtx; input: PolicyDocument }) {
  const rules = input.rules.map((rule, i) =>
    rule.classifier
      ? {
          ...rule,
          classifier: {
            ...rule.classifier,
            url: validateUpstreamUrl(rule.classifier.url, {
              ...ctx.ssrf,
              field: `rules.${i}.classifier.url`,
            }),
          },
        }
      : rule,
  );
  // Conditions are compiled and type-checked now (400 naming `rules.N.when`), so that a stored
  // document always compiles on the hot path.
  compilePolicy(input, 0);
  return policyRepo.put(ctx.db, ctx.tenantId, { ...input, rules });
}

export async function listDecisions({
  ctx,
  filter,
}: {
  ctx: Pick<PolicyCtx, "db" | "tenantId">;
  filter: DecisionFilter;
}) {
  return policyRepo.listDecisions(ctx.db, ctx.tenantId, filter);
}
