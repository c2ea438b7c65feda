import { callVariables } from "../cel/variables.ts";
import { type CompiledPolicy, ruleHolds } from "../compile.ts";
import type { PolicyInput } from "../input.ts";
import type { CompiledAnswerRule } from "./compile.ts";

/**
 * The answer rules that apply to one call, chosen with the request at step 6 (where its caller is
 * known) and carried to step 9 with the call: the policy version and the rules' 0-based indices.
 */
export type AnswerSelection = { readonly version: number; readonly rules: readonly number[] };

/**
 * The answer rules whose `match` and `when` hold for the call; null when none does (the answer is
 * then never read). A `when` that cannot be evaluated applies its rule: an answer is checked
 * rather than waved through.
 */
export function answerRulesFor(policy: CompiledPolicy, input: PolicyInput): AnswerSelection | null {
  const all = policy.answerRules;
  if (all.length === 0) return null;
  const chosen: number[] = [];
  let vars: ReturnType<typeof callVariables> | null = null;
  for (let i = 0; i < all.length; i++) {
    const r = (all[i] as CompiledAnswerRule).rule;
    if (!ruleHolds(r, input)) continue;
    if (r.when !== null) {
      vars ??= callVariables(input);
      try {
        if (!r.when.holds(vars.forCondition(r.when.readsArguments))) continue;
      } catch {
        // applies (see above)
      }
    }
    chosen.push(i);
  }
  return chosen.length === 0 ? null : { version: policy.version, rules: chosen };
}

/**
 * The selected rules in the policy step 9 reads. When the document changed since the call was
 * admitted, the current version's rules whose `match` holds apply (their `when` counted as
 * holding: the request's caller is not known to a worker).
 */
export function selectedAnswerRules(
  policy: CompiledPolicy,
  selection: AnswerSelection,
  call: Pick<PolicyInput, "tenantId" | "agentId" | "protocol" | "rpcMethod" | "mcpTool">,
): readonly CompiledAnswerRule[] {
  if (policy.version === selection.version) {
    return selection.rules.flatMap((i) => policy.answerRules[i] ?? []);
  }
  const input = { ...call, model: null, bodySize: null } as PolicyInput;
  return policy.answerRules.filter((r) => ruleHolds(r.rule, input));
}
