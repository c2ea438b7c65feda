import { type Finding, redacted } from "@gw/policy";
import { describe, expect, it } from "vitest";
import { redactTexts } from "../src/answer/guard-body.ts";
import { mcpAnswerTexts } from "../src/protocols/mcp-answer.ts";

// A redacted answer's JSON: texts without escapes have their findings replaced where they stand,
// texts with escapes are written anew; either way the JSON is the one the redacted texts written
// anew give.

const TEXTS = [
  "mail ada@example.com now",
  'a "quoted" mail ada@example.com',
  "é 😀 ada@example.com \u2028 end",
  "line\nbreak ada@example.com\ttab",
  "nothing found here",
  "ada@example.com",
];

/** Each text's findings: every occurrence of the address. */
const found = (text: string): Finding[] => {
  const out: Finding[] = [];
  for (let at = text.indexOf("ada@example.com"); at >= 0; at = text.indexOf("ada@example.com", at + 1)) {
    out.push({ start: at, end: at + 15, kind: "email" });
  }
  return out;
};

/** The JSON with every text written anew (what a redaction must equal). */
const anew = (texts: readonly string[], f: (t: string) => Finding[]) =>
  JSON.stringify({
    jsonrpc: "2.0",
    id: 1,
    result: { content: texts.map((text) => ({ type: "text", text: redacted(text, f(text)) })) },
  });

describe("redactTexts", () => {
  it("gives the JSON of the redacted texts, with and without escapes", () => {
    const json = anew(TEXTS, () => []);
    const spans = mcpAnswerTexts.texts(json);
    expect(spans?.map((s) => s.text)).toEqual(TEXTS);
    const out = redactTexts(json, spans ?? [], TEXTS.map(found));
    expect(out).toBe(anew(TEXTS, found));
    expect(out).not.toContain("ada@example.com");
  });

  it("leaves the JSON as it is when nothing was found", () => {
    const json = anew(TEXTS, () => []);
    expect(
      redactTexts(
        json,
        mcpAnswerTexts.texts(json) ?? [],
        TEXTS.map(() => []),
      ),
    ).toBe(json);
  });
});
