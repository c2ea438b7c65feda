import type { Detector, Within } from "./findings.ts";

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
  reach?: Reach,
): Detector {
  const re = new RegExp(pattern, "g");
  return (text, out, within) => {
    if (!worthScanning(text)) return;
    re.lastIndex = 0;
    let subject = text;
    if (within !== undefined && reach !== undefined) {
      // No candidate starts before `first - before` or reads past `last + after`: the search
      // starts there and sees the text up to there (a prefix, so offsets and `\b` are the same).
      re.lastIndex = Math.max(0, within.first - reach.before);
      const end = within.last + 1 + reach.after;
      if (end < text.length) subject = text.slice(0, end);
    }
    for (let m = re.exec(subject); m !== null; m = re.exec(subject)) {
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

/**
 * How far a kind's candidates reach from the characters they need: none starts more than `before`
 * characters ahead of the first, and a search for them reads at most `after` characters past the
 * last (its longest candidate, and the one character `\b` looks at).
 */
export type Reach = { readonly before: number; readonly after: number };

/** A digit: the character every candidate of a digit-bearing kind holds. */
const DIGIT = /[0-9]/;
/** The last digit of a text: linear (each run of non-digits read once after its digit). */
const LAST_DIGIT = /[0-9](?=[^0-9]*$)/;
/** Every candidate of a digit-bearing kind holds a digit: a text without one is not scanned. */
export const hasDigit = (text: string) => DIGIT.test(text);

/**
 * Where a text's digits are, from the first to the last (null: none): a digit-bearing kind's
 * candidates lie around them, so a text whose digits sit in one corner is searched there only.
 */
export function digitsWithin(text: string): Within | null {
  const first = text.search(DIGIT);
  if (first < 0) return null;
  return { first, last: lastDigit(text, first) };
}

/**
 * The last digit at or after `first` (a digit), looked for from the end in doubling pieces: the
 * piece holding it is the only one searched by LAST_DIGIT, whose cost is per digit (so a
 * digit-dense text pays for its last piece only).
 */
function lastDigit(text: string, first: number): number {
  let end = text.length;
  for (let size = 256; end > first; size *= 2) {
    const start = Math.max(first, end - size);
    const piece = text.slice(start, end);
    if (DIGIT.test(piece)) return start + (LAST_DIGIT.exec(piece)?.index ?? 0);
    end = start;
  }
  return first;
}
