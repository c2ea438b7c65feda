import { RE2Set } from "re2js";
import { type Detector, type Finding, kept, type Within } from "./findings.ts";

/**
 * One detector of a rule, and how a text is known to hold none of its candidates without running
 * it: `gate`, an RE2 pattern its every candidate matches, joins the rule's one RE2 set; `needs`
 * finds a character its every candidate holds, once per text for all the detectors needing it,
 * and the detector searches only around where it is. Neither: the detector runs on every text
 * (its own scan is a search for a literal).
 */
export type GatedDetector = {
  readonly detector: Detector;
  readonly gate?: string;
  /** With a gate: where a match of it can start (lead.ts), a JavaScript expression's source. */
  readonly lead?: string | null;
  /** Where the characters its candidates need are (null: nowhere), handed to the detector. */
  readonly needs?: (text: string) => Within | null;
};

/**
 * A rule's scan of one text: its findings, in order and without overlaps (findings.ts). `extra`
 * (the credential injected for this call) is searched in every text, before the rule's detectors.
 */
export type AnswerScan = (text: string, extra: Detector | null) => Finding[];

/**
 * DFA memory of one rule's set. RE2's own bound for a set is 8 MiB; a rule's set takes a few
 * hundred states on the texts seen so far, and when the budget runs out the DFA starts afresh or
 * RE2 finishes the text on its NFA (still linear in the text).
 */
const SET_DFA_BYTES = 1 << 20;

/**
 * A rule's detectors in one pass per text (docs/adr/0043-answer-scan-in-one-pass.md): the gates of
 * its RE2 detectors in one RE2 set, whose one linear pass says which of them have a match in the
 * text, so only those search for their matches (and the set's pass is spared for a text without
 * any of their leads); the candidate characters of its own detectors looked for once per text, so
 * a text without them is not scanned for those kinds and one with them around them only. Each detector
 * that runs finds and validates its candidates as before, so the findings are the ones of every
 * detector run on every text. A set RE2 cannot build leaves its detectors to run on every text.
 */
export function answerScan(detectors: readonly GatedDetector[]): AnswerScan {
  const gated = detectors.filter((d) => d.gate !== undefined);
  const set = gateSet(gated.map((d) => d.gate as string));
  const leads = set === null ? null : setLeads(gated);
  /** Each detector's place in the set (-1: not in it), and in `needed` (-1: needs nothing). */
  const inSet = detectors.map((d) => (set === null ? -1 : gated.indexOf(d)));
  const needed = [...new Set(detectors.flatMap((d) => d.needs ?? []))];
  const needs = detectors.map((d) => (d.needs === undefined ? -1 : needed.indexOf(d.needs)));
  return (text, extra) => {
    const out: Finding[] = [];
    if (extra !== null) extra(text, out);
    if (text.length === 0) return out;
    // No lead in the text: none of the set's patterns can match, and its pass is spared.
    const hits = set === null ? null : leads !== null && !leads.test(text) ? NONE : set.match(text);
    /** Per needed character: where it is (undefined: not looked for yet; null: absent). */
    const where: (Within | null | undefined)[] = [];
    for (let i = 0; i < detectors.length; i++) {
      const s = inSet[i] as number;
      if (s >= 0 && !(hits as number[]).includes(s)) continue;
      const n = needs[i] as number;
      let within: Within | undefined;
      if (n >= 0) {
        if (where[n] === undefined) where[n] = (needed[n] as (text: string) => Within | null)(text);
        if (where[n] === null) continue;
        within = where[n] as Within;
      }
      (detectors[i] as GatedDetector).detector(text, out, within);
    }
    return kept(out);
  };
}

const NONE: number[] = [];

/**
 * One JavaScript expression finding the lead of any of the set's patterns (docs/adr/0050), when
 * every one of them has a lead: a text it finds nothing in holds no match of the set. Null when
 * one has none (the set's pass then runs on every text: a lead search would only add to it).
 */
function setLeads(gated: readonly GatedDetector[]): RegExp | null {
  if (gated.some((d) => !d.lead)) return null;
  try {
    return new RegExp(gated.map((d) => `(?:${d.lead})`).join("|"), "u");
  } catch {
    return null; // never expected (classes of code points); the set then runs on every text
  }
}

function gateSet(gates: readonly string[]): RE2Set | null {
  if (gates.length === 0) return null;
  try {
    const set = new RE2Set(RE2Set.UNANCHORED, 0, SET_DFA_BYTES);
    for (const g of gates) set.add(g);
    set.compile();
    return set;
  } catch {
    return null;
  }
}
