import { isValidPhoneNumber } from "libphonenumber-js";
import { RE2JS } from "re2js";
import * as v from "valibot";
import validator from "validator";
import { describe, expect, it } from "vitest";
import { type Detector, type Finding, findingsIn, kept } from "../src/answer/findings.ts";
import { digitsWithin } from "../src/answer/own.ts";
import { piiDetectors } from "../src/answer/pii.ts";
import { re2Detector } from "../src/answer/re2.ts";
import { answerScan } from "../src/answer/scan.ts";
import { injectedSecretDetector, secretsDetector } from "../src/answer/secrets.ts";
import { compilePolicy, judgeAnswer, PII_KINDS, type PiiKind, PolicyDocument } from "../src/index.ts";

// The gateway's own candidate scans (docs/adr/0036-answer-scan-own-patterns-on-the-javascript-engine.md)
// find exactly what RE2 finds for the same patterns scanned over the whole text, leftmost-first,
// with the same validators; and every scan, ours and an operator's, finishes on crafted text.

const digitsOnly = (s: string) => s.replace(/[^0-9A-Za-z]/g, "");
const ssn = (s: string) => {
  const d = s.replace(/\D/g, "");
  return (
    d[0] !== "9" && !["000", "666"].includes(d.slice(0, 3)) && d.slice(3, 5) !== "00" && d.slice(5) !== "0000"
  );
};

/** The RE2 patterns and validators the scans must agree with, run by re2js on the whole text. */
const REFERENCE: Record<PiiKind | "secret", [string, (s: string) => boolean]> = {
  credit_card: ["\\b[0-9](?:[ -]?[0-9]){11,18}\\b", (s) => validator.isCreditCard(digitsOnly(s))],
  iban: [
    "\\b[A-Z]{2}[0-9]{2}(?: ?[A-Z0-9]{4}){2,7}(?: ?[A-Z0-9]{1,3})?\\b",
    (s) => validator.isIBAN(digitsOnly(s)),
  ],
  us_ssn: ["\\b[0-9]{3}[- ][0-9]{2}[- ][0-9]{4}\\b", ssn],
  email: ["[A-Za-z0-9.!#$%&'*+/=?^_`{|}~-]+@[A-Za-z0-9-]+(?:\\.[A-Za-z0-9-]+)+", () => true],
  ip_address: [
    "\\b(?:[0-9]{1,3}\\.){3}[0-9]{1,3}\\b|(?:[0-9A-Fa-f]{0,4}:){2,7}[0-9A-Fa-f]{0,4}",
    (s) => validator.isIP(s),
  ],
  phone: [
    "\\+[0-9]{1,3}[ .-]?(?:\\([0-9]{1,4}\\)|[0-9]{1,4})(?:[ .-]?[0-9]{2,4}){2,4}\\b|(?:\\([0-9]{3}\\) ?|\\b[0-9]{3}[ .-]?)[0-9]{3}[ .-]?[0-9]{4}\\b",
    (s) => isValidPhoneNumber(s, "US"),
  ],
  secret: [
    [
      "(?:AKIA|ASIA|ABIA|ACCA)[0-9A-Z]{16}",
      "gh[pousr]_[A-Za-z0-9]{36,}",
      "github_pat_[A-Za-z0-9_]{22,}",
      "glpat-[A-Za-z0-9_-]{20,}",
      "xox[abposr]-[A-Za-z0-9-]{10,}",
      "sk-(?:ant-|proj-)?[A-Za-z0-9_-]{20,}",
      "AIza[0-9A-Za-z_-]{35}",
      "(?:sk|rk)_(?:live|test)_[0-9A-Za-z]{16,}",
      "npm_[A-Za-z0-9]{36}",
      "eyJ[A-Za-z0-9_-]{8,}\\.eyJ[A-Za-z0-9_-]{8,}\\.[A-Za-z0-9_-]{8,}",
      "-----BEGIN [A-Z ]*PRIVATE KEY-----(?s:.*?)-----END [A-Z ]*PRIVATE KEY-----",
    ]
      .map((p) => `(?:${p})`)
      .join("|"),
    () => true,
  ],
};

const compiled = new Map<string, RE2JS>();

function reference(kind: PiiKind | "secret", text: string): Finding[] {
  const [pattern, valid] = REFERENCE[kind];
  const out: Finding[] = [];
  const re = compiled.get(pattern) ?? RE2JS.compile(pattern);
  compiled.set(pattern, re);
  const m = re.matcher(text);
  while (m.find()) {
    let start = m.start();
    const end = m.end();
    if (kind === "email") {
      // the match's own `@` (`end` is one past the match: an `@` right after it is not its own)
      start = Math.max(start, text.lastIndexOf("@", end - 1) - 64);
      while (text[start] === ".") start++;
      if (!validator.isEmail(text.slice(start, end))) continue;
    } else if (!valid(text.slice(start, end))) continue;
    out.push({ start, end, kind });
  }
  return out;
}

function scanned(kind: PiiKind | "secret", text: string): Finding[] {
  const out: Finding[] = [];
  const d = kind === "secret" ? secretsDetector("") : piiDetectors([kind])[0];
  d?.(text, out);
  return out;
}

/** Texts dense in every detector's anchors, prefixes and near misses (a fixed seed). */
function corpus(n: number): string[] {
  const pieces = [
    ..."0123456789 -.:@+()aAeEfFxXzZ_/!\n",
    "4111 1111 1111 1111",
    "5500-0000-0000-0004",
    "GB82 WEST 1234 5698 7654 32",
    "DE89370400440532013000",
    "536-22-1234",
    "ada.lovelace+x@example.co.uk",
    "a@b.io",
    "..@x.y",
    "192.168.10.254",
    "2001:db8::8a2e:370:7334",
    "+44 20 7946 0958",
    "(415) 555-2671",
    "+1 415 555 2671",
    "ghp_",
    "0123456789abcdefghijABCDEFGHIJ012345",
    "sk-",
    "sk_live_",
    "ant-",
    "AKIA",
    "ASIAKIA",
    "ABCDEFGHIJKLMNOP",
    "eyJ",
    "eyJhbGciOi",
    "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.c2lnbmF0dXJl",
    "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.",
    "-----BEGIN EC PRIVATE KEY-----\nMHcCAQEE\n-----END EC PRIVATE KEY-----",
    "-----BEGIN RSA PRIVATE KEY-----",
    "-----END RSA PRIVATE KEY-----",
    "-----END x",
    "xoxb-",
    "npm_",
  ];
  let seed = 20261127;
  const next = () => {
    seed = (seed * 1103515245 + 12345) % 2 ** 31;
    return seed;
  };
  return Array.from({ length: n }, () => {
    let t = "";
    const parts = 1 + (next() % 40);
    for (let i = 0; i < parts; i++) t += pieces[next() % pieces.length];
    return t;
  });
}

describe("own candidate scans", () => {
  const texts = corpus(1500);
  it.each([...PII_KINDS, "secret" as const])("%s: the same findings as RE2 over the whole text", (kind) => {
    let found = 0;
    for (const text of texts) {
      const want = reference(kind, text);
      expect(scanned(kind, text), text).toEqual(want);
      found += want.length;
    }
    expect(found).toBeGreaterThan(20); // the corpus exercises the kind
  });

  it.each([
    ["eyJ".repeat(300_000), "secret"],
    [`${"-----BEGIN A PRIVATE KEY-----".repeat(30_000)}-----END x`, "secret"],
    [`${"sk-".repeat(300_000)}`, "secret"],
    [`${"a.".repeat(500_000)}@`, "email"],
    [`${"a@".repeat(500_000)}`, "email"],
    ["1".repeat(1_000_000), "phone"],
    ["1:".repeat(500_000), "ip_address"],
    ["1 ".repeat(500_000), "credit_card"],
  ] as const)("finishes on 1 MiB of crafted text (%#), agreeing with RE2", (text, kind) => {
    expect(scanned(kind, text)).toEqual(reference(kind, text));
  });
});

/** Operator patterns for the one-pass tests: literals, classes, case folding, `\b`, an empty match. */
const PATTERNS = [
  "ACME-[0-9]{6}",
  "(?i)confidential",
  "[0-9]{4}",
  "\\bab\\b",
  "x*",
  "(a+)+$",
  "b.?c",
  "internal\\.example\\.net",
];
const INJECTED = "s3cr3t/v@lue";
const ALL_PII = ["credit_card", "iban", "us_ssn", "email", "ip_address", "phone"] as const;

/** A rule with every detector, as the policy compiles it. */
const wholeRule = compilePolicy(
  v.parse(PolicyDocument, {
    answer_rules: [{ detect: { secrets: true, pii: [...PII_KINDS], patterns: PATTERNS }, action: "redact" }],
  }),
  1,
).answerRules[0];

/** What re2js finds for the whole rule: every detector's reference matches, overlaps resolved. */
function wholeReference(text: string): Finding[] {
  const all: Finding[] = [];
  for (let at = text.indexOf(INJECTED); at >= 0; at = text.indexOf(INJECTED, at + INJECTED.length)) {
    all.push({ start: at, end: at + INJECTED.length, kind: "secret" });
  }
  all.push(...reference("secret", text));
  for (const kind of ALL_PII) all.push(...reference(kind, text));
  for (const p of PATTERNS) {
    const m = RE2JS.compile(p).matcher(text);
    while (m.find()) if (m.end() > m.start()) all.push({ start: m.start(), end: m.end(), kind: "pattern" });
  }
  return kept(all);
}

describe("one pass per rule (the detectors behind one RE2 set)", () => {
  const extra = injectedSecretDetector(INJECTED);
  const texts = corpus(600).map((t, i) =>
    i % 3 === 0
      ? `${t} ACME-123456 Confidential ab ${INJECTED} bc internal.example.net aaa`
      : i % 3 === 1
        ? `${t}${INJECTED}`
        : t,
  );

  it("finds what re2js finds for every detector of the rule over the whole text", () => {
    let found = 0;
    for (const text of texts) {
      const want = wholeReference(text);
      expect(wholeRule?.scan(text, extra), text).toEqual(want);
      found += want.length;
    }
    expect(found).toBeGreaterThan(1000);
  });

  it("skips the detectors a text holds no candidate of: by the set, by a needed character", () => {
    const ran: string[] = [];
    const counted =
      (name: string, d: Detector): Detector =>
      (text, out) => {
        ran.push(name);
        d(text, out);
      };
    const scan = answerScan([
      { detector: counted("card", piiDetectors(["credit_card"])[0] as Detector), needs: digitsWithin },
      { detector: counted("a", re2Detector(RE2JS.compile("(?i)a+b"), "pattern", false)), gate: "(?i)a+b" },
      { detector: counted("c", re2Detector(RE2JS.compile("c.d"), "pattern", false)), gate: "c.d" },
    ]);
    expect(scan("no digit in this text, none at all", null)).toEqual([]);
    expect(ran).toEqual([]);
    expect(scan("a date: 2026-12-07, c-d", null)).toEqual([{ start: 20, end: 23, kind: "pattern" }]);
    expect(ran).toEqual(["card", "c"]);
    expect(scan("card 4111 1111 1111 1111, AAb", null)).toEqual([
      { start: 5, end: 24, kind: "credit_card" },
      { start: 26, end: 29, kind: "pattern" },
    ]);
    expect(ran).toEqual(["card", "c", "card", "a"]);
  });

  it("runs every detector when the set cannot be built", () => {
    const scan = answerScan([
      { detector: piiDetectors(["email"])[0] as never, gate: "(" },
      { detector: re2Detector(RE2JS.compile("x+"), "pattern"), gate: "x+" },
    ]);
    expect(scan("mail ada@example.com, xx", null)).toEqual([
      { start: 5, end: 20, kind: "email" },
      { start: 22, end: 24, kind: "pattern" },
    ]);
  });

  it.each([
    "eyJ".repeat(300_000),
    `${"-----BEGIN A PRIVATE KEY-----".repeat(30_000)}-----END x`,
    `${"a.".repeat(500_000)}@`,
    "1".repeat(1_000_000),
    "1:".repeat(500_000),
    "1 ".repeat(500_000),
    `${"a".repeat(1_000_000)}!`,
  ])("finishes on 1 MiB of crafted text (%#), with the findings of every detector run alone", (text) => {
    const alone = findingsIn(text, [
      secretsDetector(INJECTED),
      ...piiDetectors([...PII_KINDS]),
      ...PATTERNS.map((p) => re2Detector(RE2JS.compile(p), "pattern")),
    ]);
    expect(wholeRule?.scan(text, extra)).toEqual(alone);
  });
});

describe("operator patterns", () => {
  it("a catastrophic-backtracking pattern on 100 KB finishes with the right answer (RE2)", async () => {
    const rules = compilePolicy(
      v.parse(PolicyDocument, { answer_rules: [{ detect: { patterns: ["(a+)+$", "x"] }, action: "block" }] }),
      1,
    ).answerRules;
    const ctx = {
      injected: "",
      call: { tenantId: "t", agentId: "a", protocol: "mcp", method: "tools/call", tool: "x" },
      dispatcher: undefined as never,
      onError: "deny" as const,
    };
    const crafted = `${"a".repeat(100_000)}!`;
    expect(await judgeAnswer(rules, [crafted], ctx)).toEqual({ action: "pass" });
    expect(await judgeAnswer(rules, [`${crafted}aa`], ctx)).toMatchObject({
      action: "block",
      findings: { pattern: 1 },
    });
  });
});
