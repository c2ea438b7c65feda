import type { CompiledRule } from "../compile.ts";
import type { AnswerRule } from "../schema.ts";
import type { Detector } from "./findings.ts";
import { leadOf } from "./lead.ts";
import { gatedPiiDetectors } from "./pii.ts";
import { compileRe2, hasLiteralPrefix, re2Detector } from "./re2.ts";
import { type AnswerScan, answerScan, type GatedDetector } from "./scan.ts";
import type { AnswerRuleAction } from "./schema.ts";
import { injectedSecretDetector, TOKEN_SHAPES } from "./secrets.ts";

/** An answer rule as step 9 runs it, built once per policy version. */
export type CompiledAnswerRule = {
  /** 1-based position in `answer_rules`. */
  readonly position: string;
  /** Its `match` and `when`, judged with the request at step 6 (`answerRulesFor`). */
  readonly rule: CompiledRule;
  readonly action: AnswerRuleAction;
  /** Whether it looks for secrets (the injected credential is known only when the call is made). */
  readonly secrets: boolean;
  /** Whether it has detectors (secrets, PII kinds, RE2 patterns), or a classifier alone. */
  readonly detects: boolean;
  /** Its detectors' scan of one text (scan.ts): its RE2 patterns behind one set, then the detectors with a candidate. */
  readonly scan: AnswerScan;
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
      const patterns = (r.detect.patterns ?? []).map((p, j): GatedDetector => {
        const re = compileRe2(p, `answer_rules.${i}.detect.patterns.${j}`);
        // found from its prefix alone, or after the rule's set found a match of it
        return hasLiteralPrefix(re)
          ? { detector: re2Detector(re, "pattern") }
          : { detector: re2Detector(re, "pattern", false), gate: p, lead: leadOf(re) };
      });
      const secrets = r.detect.secrets === true;
      const detectors = [
        ...(secrets ? [TOKEN_SHAPES] : []),
        ...gatedPiiDetectors(r.detect.pii ?? []),
        ...patterns,
      ];
      return Object.freeze({
        position: String(i + 1),
        rule: compileRule(r, i),
        action: r.action,
        secrets,
        detects: detectors.length > 0,
        scan: answerScan(detectors),
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

/** The detector of this call's own credential, for a rule that looks for secrets (null: none). */
export function injectedFor(rule: CompiledAnswerRule, injected: string): Detector | null {
  return rule.secrets ? injectedSecretDetector(injected) : null;
}
