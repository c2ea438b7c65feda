import { type CallVariables, callVariables, unreadableClaims } from "./cel/variables.ts";
import { type CompiledLimit, type CompiledPolicy, type Decision, ruleHolds } from "./compile.ts";
import type { PolicyInput } from "./input.ts";

/** One counter a call charges (the shape @gw/ratelimit's quota store counts). */
export type QuotaCharge = {
  readonly rule: string;
  readonly key: string;
  readonly limit: number;
  readonly windowMs: number;
};

/**
 * Where quota counters live (createQuotas in @gw/ratelimit): all or nothing per call, one count for
 * the deployment. Declared here by shape so that the policy does not depend on the store.
 */
export type QuotaStore = {
  charge: (
    tenantId: string,
    version: number,
    counters: readonly QuotaCharge[],
  ) => Promise<
    | { readonly allowed: true }
    | { readonly allowed: false; readonly index: number; readonly retryAfterSeconds: number }
  >;
  /** `charge` served from this replica's leases alone, synchronously; false: nothing charged. */
  chargeLeased?: (tenantId: string, version: number, counters: readonly QuotaCharge[]) => boolean;
};

/**
 * The counters of the `limit` rules whose `match` and `when` hold for the call, with their key
 * values, and the `on_error` outcome of the first rule whose `when` or key cannot be evaluated
 * (that rule charges nothing).
 */
export function limitsOf(
  policy: CompiledPolicy,
  input: PolicyInput,
): { charges: QuotaCharge[]; error: Decision | null } {
  const charges: QuotaCharge[] = [];
  let error: Decision | null = null;
  let vars: CallVariables | null = null;
  for (const l of policy.limits as readonly CompiledLimit[]) {
    const r = l.rule;
    if (!ruleHolds(r, input)) continue;
    let key = input.principal.sub;
    try {
      if (r.when !== null) {
        vars ??= callVariables(input);
        if (!r.when.holds(vars.forCondition(r.when.readsArguments))) continue;
      }
      if (l.key?.direct) {
        // Fields and literals only: no variables to build, no expression to walk (direct-key.ts).
        const unreadable = unreadableClaims(input);
        if (unreadable) throw unreadable;
        key = l.key.direct(input);
      } else if (l.key) {
        vars ??= callVariables(input);
        key = l.key.valueOf(vars.forCondition(l.key.readsArguments));
      }
    } catch {
      error ??= l.keyError;
      continue;
    }
    charges.push({ rule: l.position, key, limit: l.requests, windowMs: l.windowMs });
  }
  return { charges, error };
}

/** The recorded decision of a call refused by a spent counter. */
export const quotaDecision = (rule: string, retryAfterSeconds: number): Decision => ({
  action: "deny",
  matchedRule: rule,
  reason: `quota exceeded (rule ${rule})`,
  retryAfterSeconds,
});

/** A limit rule as the usage listing reads it: position, requests and window. */
export type QuotaRuleRef = { readonly rule: string; readonly limit: number; readonly windowMs: number };

/** The `limit` rules of a compiled policy, for GET /v1/policy/quotas. */
export const quotaRulesOf = (policy: CompiledPolicy): QuotaRuleRef[] =>
  policy.limits.map((l) => ({ rule: l.position, limit: l.requests, windowMs: l.windowMs }));
