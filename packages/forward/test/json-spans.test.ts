import { elementSpans, memberSpans } from "@gw/jsonrpc";
import { describe, expect, it } from "vitest";
import { mcpAnswerTexts } from "../src/protocols/mcp-answer.ts";

// The spans answer guardrails and the tool filter cut JSON text at: each value's span holds
// exactly the value JSON.parse reads, whatever escapes its strings hold.

const TRICKY = [
  "plain",
  "unescaped é, 😀 and \u2028 (sliced, not parsed again)",
  'a \\"quoted\\" word',
  "ends in a backslash \\\\",
  'backslash then quote \\\\\\"',
  "\\\\\\\\",
  '\\"',
  "{[,]}:",
  "unicode \\u0022 and \\n",
  "",
];

describe("JSON spans", () => {
  it.each(TRICKY)("member and element spans hold what JSON.parse reads (%#)", (raw) => {
    const json = `{ "a" : "${raw}", "b\\"" :["${raw}", {"c":"${raw}"}, 1 ], "d":true }`;
    const whole = JSON.parse(json) as Record<string, unknown>;
    const m = memberSpans(json, 0);
    expect(m).not.toBeNull();
    const at = (k: string) => JSON.parse(json.slice(m?.get(k)?.start, m?.get(k)?.end));
    expect(at("a")).toEqual(whole.a);
    expect(at('b"')).toEqual(whole['b"']);
    expect(at("d")).toBe(true);
    const b = m?.get('b"') as { start: number };
    expect(elementSpans(json, b.start).map((s) => JSON.parse(json.slice(s.start, s.end)))).toEqual(
      whole['b"'],
    );
  });

  it("an MCP answer's texts are read whole, escapes and all", () => {
    const texts = TRICKY.map((raw) => JSON.parse(`"${raw}"`) as string);
    const json = JSON.stringify({
      jsonrpc: "2.0",
      id: 1,
      result: { content: texts.map((text) => ({ type: "text", text })), structuredContent: { x: texts } },
    });
    expect(mcpAnswerTexts.texts(json)?.map((s) => s.text)).toEqual([...texts, ...texts]);
  });
});
