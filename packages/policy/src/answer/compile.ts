import type { CompiledRule } from "../compile.ts";
import type { AnswerRule } from "../schema.ts";
import type { Detector } from "./findings.ts";
import { piiDetectors } from "./pii.ts";
import { compileRe2, re2Detector } from "./re2.ts";
import type { AnswerRuleAction } from "./schema.ts";
import { secretsDetector } from "./secrets.ts";

/** An answer rule as step 9 runs it, built once per policy version. */
export type CompiledAnswerRule = {
  /** 1-based position in `answer_rules`. */
  readonly position: string;
  /** Its `match` and `when`, judged with the request at step 6 (`answerRulesFor`). */
  readonly rule: CompiledRule;
  readonly action: AnswerRuleAction;
  /** Whether it looks for secrets (the injected credential is known only when the call is made). */
  readonly secrets: boolean;
  /** Its PII detectors and RE2 patterns. */
  readonly detectors: readonly Detector[];
  readonly classifier: { readonly url: string; readonly timeoutMs: number } | null;
};

const DEFAULT_CLASSIFIER_TIMEOUT_MS = 2_000;

/**
 * Compiles `answer_rules`: RE2 patterns (400 naming `answer_rules.N.detect.patterns.M` for one RE2
 * rejects), conditions (400 naming `answer_rules.N.when`), detectors. `compileRule` is the request
 * rules' compiler, passed in to keep one definition of `match`.
 */
export function compileAnswerRules(
  rules: readonly AnswerRule[],
  compileRule: (rule: Pick<AnswerRule, "match" | "when">, index: number) => CompiledRule,
): readonly CompiledAnswerRule[] {
  return Object.freeze(
    rules.map((r, i) => {
      const patterns = (r.detect.patterns ?? []).map((p, j) =>
        re2Detector(compileRe2(p, `answer_rules.${i}.detect.patterns.${j}`), "pattern"),
      );
      return Object.freeze({
        position: String(i + 1),
        rule: compileRule(r, i),
        action: r.action,
        secrets: r.detect.secrets === true,
        detectors: Object.freeze([...piiDetectors(r.detect.pii ?? []), ...patterns]),
        classifier: r.classifier
          ? Object.freeze({
              url: r.classifier.url,
              timeoutMs: r.classifier.timeout_ms ?? DEFAULT_CLASSIFIER_TIMEOUT_MS,
            })
          : null,
      });
    }),
  );
}

/** The detectors of one rule for one call: its own, and the secrets with this call's credential. */
export function detectorsFor(rule: CompiledAnswerRule, injected: string): readonly Detector[] {
  return rule.secrets ? [secretsDetector(injected), ...rule.detectors] : rule.detectors;
}
