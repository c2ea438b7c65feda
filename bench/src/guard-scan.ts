// `pnpm --filter @gw/bench bench:guard-scan`: the answer guardrails' scan alone, in process, per
// detector (docs/performance.md): the bench's 4 KiB answer, the same length of plain prose (no
// anchor for most detectors), and a digit-dense text (every detector's candidates everywhere).
// CPU microseconds per call and per KiB, the median of several rounds.
import { compilePolicy, judgeAnswer, PolicyDocument } from "@gw/policy";
import * as v from "valibot";
import { GUARDED_TEXT } from "./guard-text.ts";
import { median } from "./stats.ts";

/** CPU microseconds (user + system) since `t0`: preemption by other work on the machine is not counted. */
const cpuUs = (t0: NodeJS.CpuUsage) => {
  const d = process.cpuUsage(t0);
  return d.user + d.system;
};

const PII = ["email", "phone", "credit_card", "iban", "us_ssn", "ip_address"];
const PATTERNS = ["ACME-[0-9]{6}", "(?i)confidential", "internal\\.example\\.net"];
/** Eight patterns without a literal prefix: one pass of the rule's RE2 set (docs/adr/0043). */
const MANY = [
  "(?i)confidential",
  "(?i)secret",
  "(?i)password",
  "[Pp]roject [A-Z][a-z]+",
  "\\bID-?[0-9]{5}\\b",
  "(?i)internal use",
  "[0-9]{3}-[0-9]{4}",
  "(?i)do not share",
];
const INJECTED = "bench-injected-secret-value";

const DETECTS: Record<string, Record<string, unknown>> = {
  secrets: { secrets: true },
  ...Object.fromEntries(PII.map((k) => [k, { pii: [k] }])),
  patterns: { patterns: PATTERNS },
  patterns8: { patterns: MANY },
  all: { secrets: true, pii: PII, patterns: PATTERNS },
};

const prose = "The quarterly report shows steady growth in every region we serve. ";
const TEXTS: Record<string, string> = {
  answer: GUARDED_TEXT,
  prose: prose.repeat(Math.ceil(4096 / prose.length)).slice(0, 4096),
  digits: "call 0123 4567 89, ref 2024-11-27 12:30:45.6789; ".repeat(90).slice(0, 4096),
};

async function usPerCall(detect: Record<string, unknown>, text: string): Promise<number> {
  const rules = compilePolicy(
    v.parse(PolicyDocument, { answer_rules: [{ detect, action: "redact" }] }),
    1,
  ).answerRules;
  const ctx = {
    injected: INJECTED,
    call: { tenantId: "t", agentId: "a", protocol: "mcp", method: "tools/call", tool: "x" },
    dispatcher: undefined as never,
    onError: "deny" as const,
  };
  const texts = [text];
  for (let i = 0; i < 200; i++) await judgeAnswer(rules, texts, ctx); // warm-up: JIT
  const rounds: number[] = [];
  for (let r = 0; r < 7; r++) {
    const n = 300;
    const t0 = process.cpuUsage();
    for (let i = 0; i < n; i++) await judgeAnswer(rules, texts, ctx);
    rounds.push(cpuUs(t0) / n);
  }
  return median(rounds);
}

const only = process.argv[2];
const rows: string[] = [];
for (const [name, detect] of Object.entries(DETECTS)) {
  if (only && name !== only) continue;
  const cells: string[] = [];
  for (const [tn, text] of Object.entries(TEXTS)) {
    const us = await usPerCall(detect, text);
    cells.push(
      `${tn} ${us.toFixed(1).padStart(8)} µs (${(us / (text.length / 1024)).toFixed(1).padStart(7)}/KiB)`,
    );
  }
  rows.push(`${name.padEnd(12)} ${cells.join("  ")}`);
  console.log(rows.at(-1));
}
