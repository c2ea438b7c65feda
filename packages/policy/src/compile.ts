import { type CompiledAnswerRule, compileAnswerRules } from "./answer/compile.ts";
import { type CompiledCondition, type CompiledKey, compileCondition, compileKey } from "./cel/compile.ts";
import { type CallVariables, callVariables, unreadableClaims } from "./cel/variables.ts";
import type { PolicyInput } from "./input.ts";
import {
  type LimitWindow,
  POLICY_LIMITS,
  type PolicyAction,
  type PolicyDocument,
  type PolicyRule,
  type PolicyRuleAction,
} from "./schema.ts";

/** One evaluated outcome. `matchedRule` is the 1-based rule position, "" for default/on_error. */
export type Decision = {
  readonly action: PolicyAction;
  readonly matchedRule: string;
  readonly reason: string;
  /**
   * Set on the outcome of a `require_approval` rule (action deny until an approval bound to the
   * call is used: see approvals.ts).
   */
  readonly requiresApproval?: true;
  /** Set when a spent quota counter refused the call (a deny): seconds until its window ends. */
  readonly retryAfterSeconds?: number;
};

export type ClassifierRef = { readonly url: string; readonly timeoutMs: number; readonly position: string };

export type CompiledRule = {
  readonly agents: ReadonlySet<string> | null;
  readonly toolsExact: ReadonlySet<string> | null;
  readonly toolPrefixes: readonly string[] | null;
  readonly methods: ReadonlySet<string> | null;
  readonly protocols: ReadonlySet<string> | null;
  readonly maxBody: number | null;
  /** The rule's `when`, compiled once per policy version; null when it has none. */
  readonly when: CompiledCondition | null;
  /** The outcome when `when` cannot be evaluated: `on_error`, matched rule "", naming the rule. */
  readonly whenError: Match | null;
  readonly toolStatuses: ReadonlySet<string> | null;
  /**
   * The action as the document writes it (null for a classifier rule). `decision` is what a call
   * gets (a `require_approval` rule's is a deny until approved); a tool list asks this instead.
   */
  readonly action: PolicyRuleAction | null;
  /** The rule's fixed outcome, built once: matching it allocates nothing. */
  readonly decision: Decision | null;
  readonly classifier: ClassifierRef | null;
};

/** A `limit` rule (docs/policy.md "Quotas"): counted after the decision, never first-match-wins. */
export type CompiledLimit = {
  /** Its `match` and `when` (action "limit", no decision). */
  readonly rule: CompiledRule;
  /** 1-based position in the document. */
  readonly position: string;
  readonly requests: number;
  readonly per: LimitWindow;
  readonly windowMs: number;
  /** The key expression; null for the default, `principal.sub`. */
  readonly key: CompiledKey | null;
  /** The outcome when the key (or `when`) cannot be evaluated: `on_error`, naming the rule. */
  readonly keyError: Decision;
};

export type CompiledPolicy = {
  readonly version: number;
  /** The rules that decide (first match wins): every rule but the `limit` rules. */
  readonly rules: readonly CompiledRule[];
  /** The `limit` rules, in document order; empty when none (the call then pays nothing for them). */
  readonly limits: readonly CompiledLimit[];
  readonly onError: PolicyAction;
  /** The outcome when no rule matches. */
  readonly fallback: Match;
  /** Some rule names `tool_status`: a tools/call needs its tool's catalog status to be judged. */
  readonly usesToolStatus: boolean;
  /** `answer_rules` (docs/policy.md "Answer guardrails"); empty when none: no answer is read. */
  readonly answerRules: readonly CompiledAnswerRule[];
};

/** The first matching rule's outcome: a fixed decision, or (exactly one of the two) a classifier to ask. */
export type Match = { readonly decision: Decision | null; readonly classifier: ClassifierRef | null };

const setOf = (xs: readonly string[] | undefined) => (xs ? new Set(xs) : null);

/** One rule of `rules` (or, `field` "answer_rules", the match and condition of an answer rule). */
export function compileRule(
  rule: Pick<PolicyRule, "action" | "classifier" | "match" | "when">,
  index: number,
  onError: PolicyAction,
  field = "rules",
): CompiledRule {
  const position = String(index + 1);
  const m = rule.match;
  let toolsExact: Set<string> | null = null;
  let toolPrefixes: string[] | null = null;
  if (m.tools) {
    toolsExact = new Set();
    toolPrefixes = [];
    for (const t of m.tools) {
      if (t.endsWith("*")) toolPrefixes.push(t.slice(0, -1));
      else toolsExact.add(t);
    }
  }
  return Object.freeze({
    agents: setOf(m.agents),
    toolsExact,
    toolPrefixes,
    methods: setOf(m.methods),
    protocols: setOf(m.protocols),
    maxBody: m.max_body_bytes ?? null,
    when: rule.when === undefined ? null : compileCondition(rule.when, `${field}.${index}.when`),
    whenError:
      rule.when === undefined
        ? null
        : Object.freeze({
            decision: Object.freeze({
              action: onError,
              matchedRule: "",
              reason: `rule ${position}: condition could not be evaluated`,
            }),
            classifier: null,
          }),
    toolStatuses: setOf(m.tool_status),
    action: rule.action ?? null,
    decision: decisionOf(rule, position),
    classifier: rule.classifier
      ? Object.freeze({
          url: rule.classifier.url,
          timeoutMs: rule.classifier.timeout_ms ?? POLICY_LIMITS.classifierDefaultTimeoutMs,
          position,
        })
      : null,
  });
}

export const WINDOW_MS: Readonly<Record<LimitWindow, number>> = Object.freeze({
  second: 1_000,
  minute: 60_000,
  hour: 3_600_000,
  day: 86_400_000,
});

function compileLimit(
  limit: NonNullable<PolicyRule["limit"]>,
  rule: CompiledRule,
  index: number,
  onError: PolicyAction,
): CompiledLimit {
  const position = String(index + 1);
  return Object.freeze({
    rule,
    position,
    requests: limit.requests,
    per: limit.per,
    windowMs: WINDOW_MS[limit.per],
    key: limit.key === undefined ? null : compileKey(limit.key, `rules.${index}.limit.key`),
    keyError: Object.freeze({
      action: onError,
      matchedRule: "",
      reason: `rule ${position}: limit could not be evaluated`,
    }),
  });
}

function decisionOf(rule: Pick<PolicyRule, "action">, position: string): Decision | null {
  if (rule.action === undefined || rule.action === "limit") return null;
  if (rule.action === "require_approval") {
    return Object.freeze({
      action: "deny",
      matchedRule: position,
      reason: "approval required",
      requiresApproval: true,
    });
  }
  return Object.freeze({ action: rule.action, matchedRule: position, reason: `rule ${position}` });
}

/**
 * Turns a validated document into the structure evaluation walks; done once per version. Throws
 * `invalid` (400 naming `rules.N.when`) for a condition that does not compile: PUT runs it first.
 */
export function compilePolicy(doc: PolicyDocument, version: number): CompiledPolicy {
  const rules: CompiledRule[] = [];
  const limits: CompiledLimit[] = [];
  doc.rules.forEach((r, i) => {
    const compiled = compileRule(r, i, doc.on_error);
    if (r.limit === undefined) rules.push(compiled);
    else limits.push(compileLimit(r.limit, compiled, i, doc.on_error));
  });
  return Object.freeze({
    version,
    limits: Object.freeze(limits),
    // A tools/call needs its tool's catalog status when a rule names tool_status or reads `tool.`
    usesToolStatus: doc.rules.some(
      (r) =>
        r.match.tool_status !== undefined ||
        (r.when !== undefined && /\btool\s*\./.test(r.when)) ||
        (r.limit?.key !== undefined && /\btool\s*\./.test(r.limit.key)),
    ),
    rules: Object.freeze(rules),
    answerRules: compileAnswerRules(doc.answer_rules ?? [], (r, i) =>
      compileRule({ action: "allow", match: r.match, when: r.when }, i, doc.on_error, "answer_rules"),
    ),
    onError: doc.on_error,
    fallback: Object.freeze({
      decision: Object.freeze({ action: doc.default, matchedRule: "", reason: "default" }),
      classifier: null,
    }),
  });
}

export function toolHolds(r: CompiledRule, tool: string | null): boolean {
  if (tool === null) return false;
  if (r.toolsExact?.has(tool)) return true;
  const prefixes = r.toolPrefixes as readonly string[];
  for (let i = 0; i < prefixes.length; i++) if (tool.startsWith(prefixes[i] as string)) return true;
  return false;
}

/** Whether a rule's `match` holds for the call (its `when` aside). */
export function ruleHolds(r: CompiledRule, input: PolicyInput): boolean {
  if (r.agents !== null && !r.agents.has(input.agentId)) return false;
  if (r.protocols !== null && !r.protocols.has(input.protocol)) return false;
  if (r.methods !== null && (input.rpcMethod === null || !r.methods.has(input.rpcMethod))) return false;
  if (r.toolsExact !== null && !toolHolds(r, input.mcpTool)) return false;
  if (r.toolStatuses !== null && (input.toolStatus == null || !r.toolStatuses.has(input.toolStatus))) {
    return false;
  }
  // An unknown size (a streamed body) may be any size: the condition holds, so a size cap is
  // never bypassed by leaving Content-Length out.
  if (r.maxBody !== null && input.bodySize !== null && input.bodySize <= r.maxBody) return false;
  return true;
}

/**
 * First match wins. Returns the matched rule's fixed decision (a shared frozen object), the
 * classifier to ask, or the default. Synchronous; allocation-free unless a rule has a `when`, whose
 * variables are then built once for the call and shared by every condition. A condition that
 * cannot be evaluated decides `on_error`.
 */
export function matchPolicy(policy: CompiledPolicy, input: PolicyInput): Match {
  const rules = policy.rules;
  let vars: CallVariables | null = null;
  let claimsRead = false;
  for (let i = 0; i < rules.length; i++) {
    const r = rules[i] as CompiledRule;
    if (!ruleHolds(r, input)) continue;
    if (r.when === null) return r;
    try {
      // Most conditions are read from the call directly (cel/direct-condition.ts): the variables
      // are built only for CEL. Unreadable claims fail every condition, as the variables would.
      if (r.when.direct !== null) {
        if (!claimsRead && unreadableClaims(input) !== null) return r.whenError as Match;
        claimsRead = true;
        const direct = r.when.direct(input);
        if (direct === true) return r;
        if (direct === false) continue;
      }
      vars ??= callVariables(input);
      if (r.when.holds(vars.forCondition(r.when.readsArguments))) return r;
    } catch {
      return r.whenError as Match;
    }
  }
  return policy.fallback;
}
