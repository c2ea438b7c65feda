import type { Db } from "@gw/db";
import { type SsrfPolicy, validateUpstreamUrl } from "@gw/upstream";
import { compilePolicy } from "./compile.ts";
import { type DecisionFilter, policyRepo } from "./repos/policies.ts";
import type { PolicyDocument } from "./schema.ts";

export type PolicyCtx = {
  db: Db;
  tenantId: string;
  ssrf: { policy: SsrfPolicy; allowHttp: boolean };
};

/** The tenant's row: none, or `document` null after a delete (see `policyJson`). */
export async function getPolicy({ ctx }: { ctx: Pick<PolicyCtx, "db" | "tenantId"> }) {
  return policyRepo.get(ctx.db, ctx.tenantId);
}

/** A rule with its classifier's URL (if any) through the write-time SSRF check, named `<at>.classifier.url`. */
function withCheckedClassifier<R extends { classifier?: { url: string } | undefined }>(
  rule: R,
  at: string,
  ctx: Pick<PolicyCtx, "ssrf">,
): R {
  if (!rule.classifier) return rule;
  const url = validateUpstreamUrl(rule.classifier.url, { ...ctx.ssrf, field: `${at}.classifier.url` });
  return { ...rule, classifier: { ...rule.classifier, url } };
}

/**
 * Replaces the tenant's document (already shape-checked). Classifier URLs pass the same write-time
 * SSRF check as upstream URLs; the dial-time guard checks them again on every call. On any 400
 * the stored document is unchanged. The route's write announcement (the change bus) makes it
 * effective on the next call.
 */
export async function putPolicy({ ctx, input }: { ctx: PolicyCtx; input: PolicyDocument }) {
  const rules = input.rules.map((rule, i) => withCheckedClassifier(rule, `rules.${i}`, ctx));
  const answerRules = input.answer_rules?.map((rule, i) =>
    withCheckedClassifier(rule, `answer_rules.${i}`, ctx),
  );
  // Conditions and answer patterns are compiled and type-checked now (400 naming `rules.N.when`,
  // `answer_rules.N.when` or `answer_rules.N.detect.patterns.M`), so that a stored
  // document always compiles on the hot path.
  compilePolicy(input, 0);
  return policyRepo.put(ctx.db, ctx.tenantId, {
    ...input,
    rules,
    ...(answerRules ? { answer_rules: answerRules } : {}),
  });
}

/**
 * Removes the tenant's document: nothing is evaluated or recorded for its calls again until the
 * next PUT, which is numbered above every earlier version. Idempotent. The route's write
 * announcement makes it effective on the next call, as for a PUT.
 */
export async function deletePolicy({ ctx }: { ctx: Pick<PolicyCtx, "db" | "tenantId"> }) {
  await policyRepo.clear(ctx.db, ctx.tenantId);
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
