import { AGENT_PROTOCOLS } from "@gw/db";
import * as v from "valibot";
import { ANSWER_LIMITS, answerRuleOf } from "./answer/schema.ts";
import { CLASSIFIER_FIELDS, CLASSIFIER_MAX_TIMEOUT_MS, jsonObject } from "./schema-parts.ts";

/** Bounds of a policy document: evaluation cost stays small whatever a tenant writes. */
export const POLICY_LIMITS = Object.freeze({
  maxRules: 256,
  maxListItems: 256,
  maxNameLength: 256,
  classifierDefaultTimeoutMs: 2_000,
  classifierMaxTimeoutMs: CLASSIFIER_MAX_TIMEOUT_MS,
  /** The most requests a `limit` rule may allow per window. */
  maxLimitRequests: 1_000_000_000,
});

export const ACTIONS = ["allow", "warn", "deny"] as const;
const Action = v.picklist(ACTIONS, 'must be "allow", "warn" or "deny"');
/** A rule may also hold the call for a person's decision (docs/policy.md "Approvals"). */
export const RULE_ACTIONS = [...ACTIONS, "require_approval", "limit"] as const;
const RuleAction = v.picklist(RULE_ACTIONS, 'must be "allow", "warn", "deny", "require_approval" or "limit"');
/** The fixed UTC windows a `limit` rule counts in (docs/policy.md "Quotas"). */
export const LIMIT_WINDOWS = ["second", "minute", "hour", "day"] as const;

const Name = v.pipe(
  v.string("must be a string"),
  v.minLength(1, "must not be empty"),
  v.maxLength(POLICY_LIMITS.maxNameLength, `must be at most ${POLICY_LIMITS.maxNameLength} characters`),
);
const list = <S extends v.GenericSchema<string>>(item: S) =>
  v.pipe(
    v.array(item, "must be an array"),
    v.minLength(1, "must not be empty (leave the condition out to match everything)"),
    v.maxLength(POLICY_LIMITS.maxListItems, `must have at most ${POLICY_LIMITS.maxListItems} entries`),
  );
const ToolPattern = v.pipe(
  Name,
  v.check((s) => !s.slice(0, -1).includes("*"), "only a trailing * is allowed in a tool pattern"),
);

/** The MCP tool catalog's statuses a rule can match (docs/tools.md). */
export const TOOL_STATUSES = ["unpinned", "pinned", "drifted", "removed", "unknown"] as const;

/** Conditions of a rule; every condition named must hold, a list holds when any value matches. */
export const MatchConditions = jsonObject(
  v.strictObject({
    agents: v.optional(list(Name)),
    tools: v.optional(list(ToolPattern)),
    methods: v.optional(list(Name)),
    protocols: v.optional(
      list(v.picklist(AGENT_PROTOCOLS, `must be one of ${AGENT_PROTOCOLS.map((p) => `"${p}"`).join(", ")}`)),
    ),
    tool_status: v.optional(
      list(v.picklist(TOOL_STATUSES, `must be one of ${TOOL_STATUSES.map((s) => `"${s}"`).join(", ")}`)),
    ),
    max_body_bytes: v.optional(
      v.pipe(
        v.number("must be a number"),
        v.integer("must be an integer"),
        v.minValue(0, "must not be negative"),
        v.maxValue(Number.MAX_SAFE_INTEGER),
      ),
    ),
  }),
);

export const Classifier = jsonObject(v.strictObject(CLASSIFIER_FIELDS));

/** A quota: at most `requests` calls per `per` window for each value of `key` (docs/policy.md "Quotas"). */
export const Limit = jsonObject(
  v.strictObject({
    requests: v.pipe(
      v.number("must be a number"),
      v.integer("must be an integer"),
      v.minValue(1, "must be at least 1"),
      v.maxValue(POLICY_LIMITS.maxLimitRequests, `must be at most ${POLICY_LIMITS.maxLimitRequests}`),
    ),
    per: v.picklist(LIMIT_WINDOWS, `must be one of ${LIMIT_WINDOWS.map((w) => `"${w}"`).join(", ")}`),
    // A CEL expression evaluating to a string; compiled by compileKey (cel/compile.ts).
    key: v.optional(v.pipe(v.string("must be a string"), v.minLength(1, "must not be empty"))),
  }),
);

/** A rule decides with a fixed `action` or asks a `classifier` webhook; exactly one of the two. */
export const Rule = v.pipe(
  jsonObject(
    v.strictObject({
      action: v.optional(RuleAction),
      classifier: v.optional(Classifier),
      match: v.optional(MatchConditions, {}),
      // A CEL expression; parsed, type-checked and bounded by compileCondition (cel/compile.ts).
      when: v.optional(v.pipe(v.string("must be a string"), v.minLength(1, "must not be empty"))),
      limit: v.optional(Limit),
    }),
  ),
  v.check(
    (r) => (r.action === undefined) !== (r.classifier === undefined),
    "a rule must have exactly one of action or classifier",
  ),
  v.check(
    (r) => (r.action === "limit") === (r.limit !== undefined),
    'a rule has limit exactly when its action is "limit"',
  ),
);

/** An answer rule (docs/policy.md "Answer guardrails"): judged on what the upstream answers. */
export const AnswerRule = answerRuleOf(MatchConditions);

/** The tenant's policy document (docs/policy.md), as PUT and as stored. */
export const PolicyDocument = jsonObject(
  v.strictObject({
    default: v.optional(Action, "allow"),
    on_error: v.optional(Action, "deny"),
    rules: v.optional(
      v.pipe(
        v.array(Rule, "must be an array"),
        v.maxLength(POLICY_LIMITS.maxRules, `must have at most ${POLICY_LIMITS.maxRules} rules`),
      ),
      [],
    ),
    answer_rules: v.optional(
      v.pipe(
        v.array(AnswerRule, "must be an array"),
        v.maxLength(ANSWER_LIMITS.maxRules, `must have at most ${ANSWER_LIMITS.maxRules} answer rules`),
      ),
    ),
  }),
);

export type PolicyAction = (typeof ACTIONS)[number];
/** What a rule may write: the actions, and `require_approval`. */
export type PolicyRuleAction = (typeof RULE_ACTIONS)[number];
export type PolicyDocument = v.InferOutput<typeof PolicyDocument>;
export type PolicyRule = v.InferOutput<typeof Rule>;
export type MatchConditions = v.InferOutput<typeof MatchConditions>;
export type AnswerRule = v.InferOutput<typeof AnswerRule>;
export type LimitWindow = (typeof LIMIT_WINDOWS)[number];
