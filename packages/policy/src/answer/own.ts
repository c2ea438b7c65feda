import type { Detector } from "./findings.ts";

/**
 * The gateway's own candidate patterns run on the JavaScript engine (docs/adr/0036): they are
 * constants, each written so that every attempt either fails within a bounded number of
 * characters or succeeds and consumes what it read (bounded repeats, or an unbounded run that
 * ends the pattern), so a scan costs linear time whatever the text. Operator patterns never come
 * here: they run on RE2 (re2.ts). Matches are the leftmost-first ones RE2 finds for the same
 * pattern (the same ASCII classes, `\b` on ASCII word characters, alternatives in order).
 */
export function ownDetector(
  pattern: string,
  kind: string,
  valid: (match: string) => boolean,
  worthScanning: (text: string) => boolean = () => true,
): Detector {
  const re = new RegExp(pattern, "g");
  return (text, out) => {
    if (!worthScanning(text)) return;
    re.lastIndex = 0;
    for (let m = re.exec(text); m !== null; m = re.exec(text)) {
      const start = m.index;
      const end = start + m[0].length;
      if (end === start) {
        re.lastIndex = end + 1;
        continue;
      }
      if (valid(m[0])) out.push({ start, end, kind });
    }
  };
}

/** A digit: the character every candidate of a digit-bearing kind holds. */
export const DIGIT = /[0-9]/;
/** Every candidate of a digit-bearing kind holds a digit: a text without one is not scanned. */
export const hasDigit = (text: string) => DIGIT.test(text);
