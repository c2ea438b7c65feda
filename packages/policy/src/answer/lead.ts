import type { Re2 } from "./re2.ts";

/**
 * The parts of `re2js`'s compiled program a lead is read from (docs/adr/0050): its instructions,
 * the first one, and the rune classes of its DFA (ranges of runes every instruction treats alike).
 */
type Inst = {
  readonly op: number;
  readonly out: number;
  readonly runes: Int32Array;
  matchRune(r: number): boolean;
};
type Compiled = {
  readonly prog: { readonly start: number; readonly inst: readonly Inst[] };
  readonly dfa: { readonly classBounds: Int32Array };
};

/** `re2js`'s instruction codes (Inst.js): the ones a lead passes through or reads. */
const OP = { CAPTURE: 3, EMPTY_WIDTH: 4, NOP: 7, RUNE: 8, RUNE1: 9 } as const;
const MAX_RUNE = 0x10ffff;
/** Classes read at most: a longer lead finds no fewer texts without a match. */
const MAX_LEAD = 16;
/** A class of more ranges ends the lead (its JavaScript class would be large for little gain). */
const MAX_RANGES = 32;
/** A class of at most this many runes is narrow: prose rarely holds a run of three of them. */
const NARROW_RUNES = 4;
/** Narrow classes a lead needs to be worth a search of its own. */
const MIN_NARROW = 3;

/**
 * Where a match of `re` can start, as the source of a JavaScript regular expression (flag `u`): the classes of the runes
 * that every match begins with, in order, read from RE2's own compiled program (the instructions
 * from its start up to its first branch; zero-width conditions such as `\b` are left out, which
 * only widens it), each class the runes RE2's instruction accepts (its own case folding). A text
 * it finds nothing in holds no match of `re`; where it finds something, RE2 decides. Null when the
 * program has no lead of MIN_NARROW narrow classes (it starts with a branch, a repeat, `.`, or
 * wide classes): such a pattern is left to the rule's set.
 *
 * The expression is a fixed sequence of at most MAX_LEAD classes, without repeats or
 * alternatives, so the JavaScript engine's search is linear in the text whatever the pattern.
 */
export function leadOf(re: Re2): string | null {
  const compiled = re.re2() as unknown as Compiled;
  const { prog } = compiled;
  const classes: string[] = [];
  let narrow = 0;
  let bounds: Int32Array | null = null;
  let pc = prog.start;
  for (let steps = 0; classes.length < MAX_LEAD && steps < 4 * MAX_LEAD; steps++) {
    const inst = prog.inst[pc];
    if (inst === undefined) break;
    if (inst.op === OP.CAPTURE || inst.op === OP.NOP || inst.op === OP.EMPTY_WIDTH) {
      pc = inst.out;
      continue;
    }
    if (inst.op !== OP.RUNE && inst.op !== OP.RUNE1) break;
    bounds ??= compiled.dfa.classBounds;
    const ranges = acceptedRanges(inst, bounds);
    if (ranges.length === 0 || ranges.length > 2 * MAX_RANGES) break;
    classes.push(jsClass(ranges));
    if (size(ranges) <= NARROW_RUNES) narrow++;
    pc = inst.out;
  }
  return narrow >= MIN_NARROW ? classes.join("") : null;
}

/**
 * The runes `inst` accepts, as sorted [lo, hi] pairs: the DFA's rune classes are ranges every
 * instruction of the program treats alike (its bounds include each case-folded rune's orbit), so
 * asking the instruction about one rune of each class answers for the whole class.
 */
function acceptedRanges(inst: Inst, bounds: Int32Array): number[] {
  const out: number[] = [];
  let lo = 0;
  for (let i = 0; i <= bounds.length; i++) {
    const hi = i < bounds.length ? (bounds[i] as number) - 1 : MAX_RUNE;
    if (hi >= lo && inst.matchRune(lo)) {
      if (out.length > 0 && out[out.length - 1] === lo - 1) out[out.length - 1] = hi;
      else out.push(lo, hi);
    }
    lo = hi + 1;
  }
  return out;
}

function size(ranges: readonly number[]): number {
  let n = 0;
  for (let i = 0; i < ranges.length; i += 2) n += (ranges[i + 1] as number) - (ranges[i] as number) + 1;
  return n;
}

const hex = (r: number) => `\\u{${r.toString(16)}}`;

function jsClass(ranges: readonly number[]): string {
  let out = "[";
  for (let i = 0; i < ranges.length; i += 2) {
    const lo = ranges[i] as number;
    const hi = ranges[i + 1] as number;
    out += lo === hi ? hex(lo) : `${hex(lo)}-${hex(hi)}`;
  }
  return `${out}]`;
}
