import { RE2JS } from "re2js";
import * as v from "valibot";
import { describe, expect, it } from "vitest";
import { type Finding, kept } from "../src/answer/findings.ts";
import { leadOf } from "../src/answer/lead.ts";
import { compilePolicy, PolicyDocument } from "../src/index.ts";

// A rule's RE2 set is skipped for a text holding no lead of its patterns
// (docs/adr/0050-operator-patterns-behind-their-leads.md): the findings stay the ones re2js finds
// for every pattern over the whole text, case folding included.

/** Patterns with a lead each: case-folded literals (with runes whose fold orbit leaves ASCII), classes, `\b`. */
const LED = [
  "(?i)confidential",
  "(?i)do not share",
  "[Pp]roject [A-Z][a-z]+",
  "(?i)straße",
  "(?i)kiss",
  "\\bAB-C[0-9]+",
  "(?i)ünïcödé",
  "😀x😀",
];

const pieces = [
  ..."abcdefghijklmnopqrstuvwxyz ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-\n",
  "confidential",
  "CONFIDENTIAL",
  "cOnFiDeNtIaL",
  "confidentia",
  "do not share",
  "DO NOT SHARE",
  "do not ſhare", // ſ (U+017F) folds with s
  "Project Alpha",
  "project X",
  "Project ",
  "STRASSE",
  "straße",
  "STRAẞE", // ẞ (U+1E9E) folds with ß
  "\u212Aiss", // the Kelvin sign folds with k
  "KIſſ",
  "AB-C1",
  "xAB-C2",
  "ÜNÏCÖDÉ",
  "😀x😀",
  "😀X😀",
  "\ud800x", // a lone surrogate
];

function corpus(n: number): string[] {
  let seed = 20261207;
  const next = () => {
    seed = (seed * 1103515245 + 12345) % 2 ** 31;
    return seed;
  };
  return Array.from({ length: n }, () => {
    let t = "";
    const parts = 1 + (next() % 30);
    for (let i = 0; i < parts; i++) t += pieces[next() % pieces.length];
    return t;
  });
}

function reference(patterns: readonly string[], text: string): Finding[] {
  const all: Finding[] = [];
  for (const p of patterns) {
    const m = RE2JS.compile(p).matcher(text);
    while (m.find()) if (m.end() > m.start()) all.push({ start: m.start(), end: m.end(), kind: "pattern" });
  }
  return kept(all);
}

describe("leads of operator patterns", () => {
  const texts = corpus(2000);

  it.each(LED)("%s: every text re2js finds a match in holds its lead", (p) => {
    const source = leadOf(RE2JS.compile(p));
    expect(source).not.toBeNull();
    const lead = new RegExp(source as string, "u");
    let matched = 0;
    for (const text of texts) {
      if (!RE2JS.compile(p).test(text)) continue;
      matched++;
      expect(lead.test(text), text).toBe(true);
    }
    expect(matched).toBeGreaterThan(3); // the corpus exercises the pattern
  });

  it.each([
    ["(?i)ks", "two classes only"],
    ["x*", "a repeat first"],
    ["(a+)+$", "a repeat first"],
    ["b.?c", "a branch after one class"],
    ["[0-9]{3}-[0-9]{4}", "wide classes"],
    ["(?:abc|xyz)", "a branch first"],
    [".abc", "any character first"],
  ])("%s has none (%s)", (p) => {
    expect(leadOf(RE2JS.compile(p))).toBeNull();
  });

  it("a rule of led patterns finds what re2js finds over the whole text, with or without a lead", () => {
    const rule = compilePolicy(
      v.parse(PolicyDocument, { answer_rules: [{ detect: { patterns: LED }, action: "redact" }] }),
      1,
    ).answerRules[0];
    let found = 0;
    let without = 0;
    for (const text of [...texts, "nothing to see here", ""]) {
      const want = reference(LED, text);
      expect(rule?.scan(text, null), text).toEqual(want);
      found += want.length;
      if (want.length === 0) without++;
    }
    expect(found).toBeGreaterThan(500);
    expect(without).toBeGreaterThan(50);
  });

  it("a text without a lead passes clean; the same text with one is redacted", () => {
    const rule = compilePolicy(
      v.parse(PolicyDocument, {
        answer_rules: [{ detect: { patterns: ["(?i)confidential", "(?i)do not share"] }, action: "redact" }],
      }),
      1,
    ).answerRules[0];
    const clean = "The quarterly report shows steady growth in every region we serve. ".repeat(60);
    expect(rule?.scan(clean, null)).toEqual([]);
    expect(rule?.scan(`${clean}ConFidential`, null)).toEqual([
      { start: clean.length, end: clean.length + 12, kind: "pattern" },
    ]);
    expect(rule?.scan(`Do not ſhare ${clean}`, null)).toEqual([{ start: 0, end: 12, kind: "pattern" }]);
  });
});
