import type { Dispatcher } from "undici";
import { askClassifier } from "./classifier.ts";
import { type CompiledPolicy, type Decision, matchPolicy } from "./compile.ts";
import type { PolicyInput } from "./input.ts";

/**
 * Evaluates a call once: the first matching rule decides, a classifier rule asks its webhook, no
 * match gives the default. Resolves synchronously (no promise) unless a classifier is asked.
 */
export function evaluatePolicy(
  policy: CompiledPolicy,
  input: PolicyInput,
  opts: { dispatcher: Dispatcher },
): Decision | Promise<Decision> {
  const m = matchPolicy(policy, input);
  if (m.classifier) {
    return askClassifier(m.classifier, input, { dispatcher: opts.dispatcher, onError: policy.onError });
  }
  return m.decision as Decision;
}
