/** One match in one text: `[start, end)` in UTF-16 code units, and the kind it is redacted as. */
export type Finding = { readonly start: number; readonly end: number; readonly kind: string };

/**
 * Where in a text the candidates of a kind can be: the positions of the first and the last of the
 * characters every candidate holds (a digit: own.ts), found once per text for every kind needing it.
 */
export type Within = { readonly first: number; readonly last: number };

/** Finds matches of one kind in one text (only around `within`, when given: its candidates lie there). */
export type Detector = (text: string, out: Finding[], within?: Within) => void;

/**
 * The matches of every detector in `text`, in order, without overlaps: where two overlap, the one
 * that starts first (then the longer) is kept, so a card number inside a token is redacted once.
 */
export function findingsIn(text: string, detectors: readonly Detector[]): Finding[] {
  const all: Finding[] = [];
  for (const d of detectors) d(text, all);
  return kept(all);
}

/** The findings `all` holds (in the order their detectors ran), in order and without overlaps (above). */
export function kept(all: Finding[]): Finding[] {
  if (all.length < 2) return all;
  all.sort((a, b) => a.start - b.start || b.end - a.end);
  const out: Finding[] = [];
  let reach = -1;
  for (const f of all) {
    if (f.start < reach) continue;
    out.push(f);
    reach = f.end;
  }
  return out;
}

/** What a finding of `kind` is replaced with: ASCII, so it needs no escape in JSON. */
export const redaction = (kind: string): string => `[redacted:${kind}]`;

/** The text with each finding replaced by `[redacted:<kind>]`. */
export function redacted(text: string, findings: readonly Finding[]): string {
  let out = "";
  let at = 0;
  for (const f of findings) {
    out += `${text.slice(at, f.start)}${redaction(f.kind)}`;
    at = f.end;
  }
  return out + text.slice(at);
}
