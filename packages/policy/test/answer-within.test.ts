import { describe, expect, it } from "vitest";
import type { Finding } from "../src/answer/findings.ts";
import { digitsWithin } from "../src/answer/own.ts";
import { gatedPiiDetectors } from "../src/answer/pii.ts";
import { PII_KINDS } from "../src/index.ts";

// A digit-bearing kind is searched only around a text's digits (own.ts, `digitsWithin`): the
// findings are the ones of its search over the whole text, candidates at the edges included.

const EDGES = [
  "MT84 MALT 0110 0001 2345 MTLC AST0 01S", // an IBAN ending in letters after its last digit
  "GB82 WEST 1234 5698 7654 32",
  "+44 20 7946 0958",
  "(415) 555-2671",
  "call +1 415 555 2671.",
  "4111 1111 1111 1111",
  "4111111111111111x", // no word boundary after it
  "x4111111111111111",
  "536-22-1234",
  "192.168.10.254",
  "10.0.0.1:8080",
  "7",
  "ab12",
];
const PROSE = ["The quarterly report shows steady growth. ", "ABCD EFGH IJKL ", "see (", "+", " "];

function texts(n: number): string[] {
  let seed = 20261207;
  const next = () => {
    seed = (seed * 1103515245 + 12345) % 2 ** 31;
    return seed;
  };
  const out: string[] = [];
  for (let i = 0; i < n; i++) {
    let t = "";
    for (let j = next() % 6; j > 0; j--) t += PROSE[next() % PROSE.length];
    for (let j = 1 + (next() % 3); j > 0; j--)
      t += EDGES[next() % EDGES.length] + (PROSE[next() % PROSE.length] as string).slice(0, next() % 3);
    for (let j = next() % 6; j > 0; j--) t += PROSE[next() % PROSE.length];
    out.push(t);
  }
  return out;
}

describe("digit-bearing kinds searched around the digits", () => {
  it.each(PII_KINDS.filter((k) => k !== "email" && k !== "ip_address"))(
    "%s: the findings of a search of the whole text",
    (kind) => {
      const [gated] = gatedPiiDetectors([kind]);
      const detector = gated?.detector;
      expect(gated?.needs).toBe(digitsWithin);
      let found = 0;
      for (const text of texts(1500)) {
        const whole: Finding[] = [];
        detector?.(text, whole);
        const around: Finding[] = [];
        const within = digitsWithin(text);
        if (within !== null) detector?.(text, around, within);
        expect(around, text).toEqual(whole);
        found += whole.length;
      }
      expect(found).toBeGreaterThan(50);
    },
  );

  it("finds the first and the last digit, or none", () => {
    expect(digitsWithin("no digit here")).toBeNull();
    expect(digitsWithin("a 1 b")).toEqual({ first: 2, last: 2 });
    expect(digitsWithin("x12 yy 3 zz")).toEqual({ first: 1, last: 7 });
    expect(digitsWithin(`${"a".repeat(5000)}9${"b".repeat(5000)}`)).toEqual({ first: 5000, last: 5000 });
  });
});
