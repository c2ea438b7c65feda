import * as v from "valibot";
import { CLASSIFIER_FIELDS, jsonObject } from "../schema-parts.ts";

/** Bounds of answer rules: compiling and scanning stay small whatever a tenant writes. */
export const ANSWER_LIMITS = Object.freeze({
  maxRules: 64,
  maxPatterns: 32,
  /** Characters of one RE2 pattern. */
  maxPatternLength: 1_024,
  /** A guarded answer is held for its own response message up to this size; larger → blocked. */
  maxHeldBytes: 8 * 1024 * 1024,
  /** What a classifier receives of an answer's texts, in UTF-8 bytes. */
  classifierContentMaxBytes: 64 * 1024,
});

/** The PII an answer rule can look for (docs/policy.md "Answer guardrails"). */
export const PII_KINDS = ["email", "phone", "credit_card", "iban", "us_ssn", "ip_address"] as const;
export type PiiKind = (typeof PII_KINDS)[number];
export const ANSWER_ACTIONS = ["redact", "block", "warn"] as const;
export type AnswerRuleAction = (typeof ANSWER_ACTIONS)[number];

const Pattern = v.pipe(
  v.string("must be a string"),
  v.minLength(1, "must not be empty"),
  v.maxLength(ANSWER_LIMITS.maxPatternLength, `must be at most ${ANSWER_LIMITS.maxPatternLength} characters`),
);

/** What an answer rule looks for; RE2 compiles the patterns (compileAnswerRules: 400 naming one it rejects). */
export const AnswerDetect = v.pipe(
  jsonObject(
    v.strictObject({
      secrets: v.optional(v.literal(true, "must be true (leave it out to not look for secrets)")),
      pii: v.optional(
        v.pipe(
          v.array(v.picklist(PII_KINDS, `must be one of ${PII_KINDS.map((k) => `"${k}"`).join(", ")}`)),
          v.minLength(1, "must not be empty"),
        ),
      ),
      patterns: v.optional(
        v.pipe(
          v.array(Pattern, "must be an array"),
          v.minLength(1, "must not be empty"),
          v.maxLength(ANSWER_LIMITS.maxPatterns, `must have at most ${ANSWER_LIMITS.maxPatterns} patterns`),
        ),
      ),
    }),
  ),
);

/** A webhook that reads an answer's texts (it opts in with `include_content: true`). */
export const AnswerClassifier = jsonObject(
  v.strictObject({
    ...CLASSIFIER_FIELDS,
    include_content: v.literal(true, "must be true: the classifier receives the answer's texts"),
  }),
);

/**
 * One answer rule: which answers (`match`, `when`, as request rules write them; the match schema
 * is passed in to keep one definition), what to look for, and what to do on a finding.
 */
export const answerRuleOf = <M extends v.GenericSchema>(match: M) =>
  v.pipe(
    jsonObject(
      v.strictObject({
        match: v.optional(match, {}),
        when: v.optional(v.pipe(v.string("must be a string"), v.minLength(1, "must not be empty"))),
        detect: v.optional(AnswerDetect, {}),
        action: v.picklist(ANSWER_ACTIONS, 'must be "redact", "block" or "warn"'),
        classifier: v.optional(AnswerClassifier),
      }),
    ),
    v.check(
      (r) =>
        r.classifier !== undefined ||
        r.detect?.secrets !== undefined ||
        r.detect?.pii !== undefined ||
        r.detect?.patterns !== undefined,
      "an answer rule needs something to look for: detect.secrets, detect.pii, detect.patterns or a classifier",
    ),
  );
