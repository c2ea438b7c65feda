import type { Dispatcher } from "undici";
import type { PolicyAction } from "../schema.ts";
import { type AnswerCallFacts, askAnswerClassifier } from "./classifier.ts";
import { type CompiledAnswerRule, injectedFor } from "./compile.ts";
import { type Finding, redacted } from "./findings.ts";

/** What an answer's texts got: passed as they are, or the acting rule's action and findings. */
export type AnswerVerdict =
  | { readonly action: "pass" }
  | {
      readonly action: "redact" | "block" | "warn";
      /** The acting rule's 1-based position. */
      readonly rule: string;
      /** Kinds and counts, never the matched text. */
      readonly findings: Readonly<Record<string, number>>;
      /** For a redaction: each text as the caller receives it (the same order). */
      readonly texts: readonly string[];
      /** For a redaction: each text's findings, in order (what `texts` replaced; none otherwise). */
      readonly found: readonly (readonly Finding[])[];
      readonly reason: string;
    };

const PASS: AnswerVerdict = Object.freeze({ action: "pass" });
const STRENGTH = { warn: 1, redact: 2, block: 3 } as const;

/**
 * Judges one answer's texts by the answer rules that apply to its call, in order: the first rule
 * with a finding acts (docs/policy.md "Answer guardrails"). A rule's detectors find matches; its
 * classifier, when it has one, reads the texts too and may ask for warn or block; the stronger
 * of the two acts (a redaction redacts the detectors' matches). `injected` is the secret the
 * gateway injected for this call ("" when none).
 */
export async function judgeAnswer(
  rules: readonly CompiledAnswerRule[],
  texts: readonly string[],
  ctx: { injected: string; call: AnswerCallFacts; dispatcher: Dispatcher; onError: PolicyAction },
): Promise<AnswerVerdict> {
  for (const rule of rules) {
    const found: Finding[][] = [];
    const findings: Record<string, number> = {};
    let any = false;
    if (rule.detects) {
      const injected = injectedFor(rule, ctx.injected);
      for (const text of texts) {
        const f = rule.scan(text, injected);
        found.push(f);
        for (const x of f) findings[x.kind] = (findings[x.kind] ?? 0) + 1;
        if (f.length > 0) any = true;
      }
    }
    let action: "redact" | "block" | "warn" | null = any ? rule.action : null;
    let reason = `answer rule ${rule.position}`;
    if (rule.classifier) {
      const said = await askAnswerClassifier(rule.classifier, ctx.call, texts, ctx);
      if (said.action !== "allow") {
        findings.classifier = 1;
        if (action === null || STRENGTH[said.action] > STRENGTH[action]) action = said.action;
        reason = `answer rule ${rule.position}: ${said.reason}`;
      }
    }
    if (action === null) continue;
    return {
      action,
      rule: rule.position,
      findings,
      texts: action === "redact" ? texts.map((t, i) => redacted(t, found[i] ?? [])) : texts,
      found: action === "redact" ? found : [],
      reason,
    };
  }
  return PASS;
}
