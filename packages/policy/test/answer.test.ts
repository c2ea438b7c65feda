import * as v from "valibot";
import { describe, expect, it } from "vitest";
import { classifierContent, compilePolicy, judgeAnswer, PolicyDocument } from "../src/index.ts";

// Answer rules' detectors (docs/policy.md "Answer guardrails"): validated matches only, kinds
// and counts, redaction in order, the first rule with a finding acting.

const rulesOf = (answer_rules: unknown[]) =>
  compilePolicy(v.parse(PolicyDocument, { answer_rules }), 1).answerRules;
const judge = (answer_rules: unknown[], texts: string[], injected = "") =>
  judgeAnswer(rulesOf(answer_rules), texts, {
    injected,
    call: { tenantId: "t", agentId: "a", protocol: "mcp", method: "tools/call", tool: "x" },
    dispatcher: undefined as never,
    onError: "deny",
  });
const redact = (pii: string[]) => [{ detect: { pii }, action: "redact" }];

describe("validated PII", () => {
  it.each([
    ["credit_card", "4111 1111 1111 1111", "4111 1111 1111 1112"],
    ["credit_card", "5500-0000-0000-0004", "1234-5678-9012-3456"],
    ["iban", "GB82 WEST 1234 5698 7654 32", "GB82 WEST 1234 5698 7654 33"],
    ["iban", "DE89370400440532013000", "DE89370400440532013001"],
    ["us_ssn", "536-22-1234", "666-22-1234"],
    ["email", "ada.lovelace+x@example.co.uk", "ada@@example"],
    ["ip_address", "192.168.10.254", "999.1.1.1"],
    ["ip_address", "2001:db8::8a2e:370:7334", "12:34"],
    ["phone", "+44 20 7946 0958", "+1 000 000 0000"],
    ["phone", "(415) 555-2671", "(000) 000-0000"],
  ])("%s: %s is found, %s is not", async (kind, valid, invalid) => {
    const hit = await judge(redact([kind]), [`a ${valid} b`]);
    expect(hit).toMatchObject({
      action: "redact",
      findings: { [kind]: 1 },
      texts: [`a [redacted:${kind}] b`],
    });
    expect(await judge(redact([kind]), [`a ${invalid} b`])).toEqual({ action: "pass" });
  });
});

describe("secrets", () => {
  it("finds the injected credential, its percent-encoded form and token shapes; never counts text", async () => {
    const injected = "s3cr/t+value";
    const texts = [
      `x ${injected} y ${encodeURIComponent(injected)}`,
      `AKIAABCDEFGHIJKLMNOP and sk_live_${"a".repeat(24)}`,
    ];
    const r = await judge([{ detect: { secrets: true }, action: "redact" }], texts, injected);
    expect(r).toMatchObject({ action: "redact", findings: { secret: 4 } });
    expect(r.action === "redact" && r.texts).toEqual([
      "x [redacted:secret] y [redacted:secret]",
      "[redacted:secret] and [redacted:secret]",
    ]);
    expect(JSON.stringify(r.action === "redact" ? r.findings : {})).not.toContain(injected);
  });

  it("without an injected credential only shapes count", async () => {
    expect(await judge([{ detect: { secrets: true }, action: "block" }], ["plain words"])).toEqual({
      action: "pass",
    });
  });
});

describe("rules", () => {
  it("the first rule with a finding acts, with its own findings", async () => {
    const r = await judge(
      [
        { detect: { patterns: ["nope"] }, action: "block" },
        { detect: { pii: ["email"] }, action: "warn" },
        { detect: { pii: ["email"] }, action: "block" },
      ],
      ["a@b.io and c@d.io"],
    );
    expect(r).toMatchObject({ action: "warn", rule: "2", findings: { email: 2 } });
  });

  it("overlapping matches are redacted once, the earlier and longer kept", async () => {
    const r = await judge(
      [{ detect: { pii: ["email"], patterns: ["b@c", "[0-9]+"] }, action: "redact" }],
      ["ab@cd.io 12"],
    );
    expect(r.action === "redact" && r.texts).toEqual(["[redacted:email] [redacted:pattern]"]);
  });

  it("an empty match of a pattern finds nothing", async () => {
    expect(await judge([{ detect: { patterns: ["x*"] }, action: "block" }], ["abc"])).toEqual({
      action: "pass",
    });
  });
});

describe("classifier content", () => {
  it("keeps the texts in order within 64 KiB, cutting at a whole character", () => {
    const fox = "🦊".repeat(20_000); // 80,000 bytes
    const out = classifierContent(["first", fox, "never"]);
    expect(out[0]).toBe("first");
    expect(out).toHaveLength(2);
    expect(Buffer.byteLength(out.join(""))).toBeLessThanOrEqual(64 * 1024);
    expect(out[1]).toMatch(/^(🦊)+$/u);
  });
});
