import { invalid } from "@gw/core";
import { RE2JS } from "re2js";
import type { Detector } from "./findings.ts";

/** A pattern compiled by RE2 (linear time in the text, whatever the pattern: docs/policy.md). */
export type Re2 = RE2JS;

/** Compiles an operator's pattern; a pattern RE2 rejects → 400 naming `field`, never the pattern's text. */
export function compileRe2(pattern: string, field: string): Re2 {
  try {
    return RE2JS.compile(pattern);
  } catch {
    throw invalid(`${field}: not a valid RE2 pattern`);
  }
}

/**
 * A detector reporting every match of `re` as `kind`. Empty matches are skipped (a pattern like
 * `a*` finds nothing to redact). `pretest`: a yes/no scan first (a fraction of a match search:
 * most texts hold no match), for a pattern whose texts no rule's set sorted out (scan.ts).
 */
export function re2Detector(re: Re2, kind: string, pretest = true): Detector {
  return (text, out) => {
    if (pretest && !re.test(text)) return;
    const m = re.matcher(text);
    while (m.find()) {
      const start = m.start();
      const end = m.end();
      if (end === start) continue;
      out.push({ start, end, kind });
    }
  };
}

/**
 * Whether RE2 finds `re`'s matches from a literal prefix of at least three characters: its search
 * then skips from one occurrence of the prefix to the next, faster than a pass of the rule's set.
 */
export function hasLiteralPrefix(re: Re2): boolean {
  return re.re2().prefix.length >= 3;
}
