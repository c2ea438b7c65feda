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
 * A detector reporting every match of `re` as `kind`, those `valid` accepts (a checksum, a
 * number plan). Empty matches are skipped (a pattern like `a*` finds nothing to redact).
 */
export function re2Detector(re: Re2, kind: string, valid?: (match: string) => boolean): Detector {
  return (text, out) => {
    // A yes/no scan costs a fraction of a match search: most texts hold no match at all.
    if (!re.test(text)) return;
    const m = re.matcher(text);
    while (m.find()) {
      const start = m.start();
      const end = m.end();
      if (end === start) continue;
      if (valid && !valid(text.slice(start, end))) continue;
      out.push({ start, end, kind });
    }
  };
}
