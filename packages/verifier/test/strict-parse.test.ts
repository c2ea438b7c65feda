import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { parseStrictJson, StrictJsonError } from "../src/json/strict-parse.ts";

const bytes = (s: string) => Buffer.from(s, "utf8");
const parse = (s: string | Uint8Array) => parseStrictJson(typeof s === "string" ? bytes(s) : s);

describe("parseStrictJson", () => {
  it("parses RFC 8259 JSON to the value JSON.parse gives", () => {
    for (const text of [
      "0",
      "-0",
      "1.5e+10",
      "-12.25E-3",
      '"a\\"\\\\\\/\\b\\f\\n\\r\\t\\u00e9\\ud83d\\ude00"',
      " \t\r\n[ true , false , null , { } , [ ] ] ",
      '{"__proto__": {"x": 1}, "constructor": 2}',
      '"é😀"',
    ]) {
      expect(parse(text).value).toEqual(JSON.parse(text));
    }
    const proto = parse('{"__proto__": 1}').value as object;
    expect(Object.getPrototypeOf(proto)).toBe(Object.prototype);
    expect(Object.hasOwn(proto, "__proto__")).toBe(true);
  });

  it("gives the exact byte span of each top-level member's value", () => {
    const text = '{ "a" : {"x": [1, 2]} , "é": "ü" ,"n":-1.0e3}';
    const { members } = parse(text);
    const buf = bytes(text);
    const slice = (k: string) => {
      const span = members?.get(k);
      return span && buf.subarray(span.start, span.end).toString("utf8");
    };
    expect(slice("a")).toBe('{"x": [1, 2]}');
    expect(slice("é")).toBe('"ü"');
    expect(slice("n")).toBe("-1.0e3");
    expect(parse("[1]").members).toBeNull();
  });

  const refused: Array<[string, string | Uint8Array]> = [
    ["a duplicate key", '{"a":1,"a":2}'],
    ["a duplicate key nested in an object", '{"a":{"b":1,"b":1}}'],
    ["a duplicate key nested in an array", '{"a":[{"b":1},{"c":1,"c":2}]}'],
    ["a duplicate key spelled with an escape", '{"a":1,"\\u0061":2}'],
    ["a duplicate __proto__", '{"__proto__":1,"__proto__":2}'],
    ["a lone high surrogate", '"\\ud800"'],
    ["a lone low surrogate", '"\\udc00x"'],
    ["a high surrogate followed by a non-surrogate escape", '"\\ud800\\u0041"'],
    ["a number too large for a double", "1e400"],
    ["a leading zero", "01"],
    ["a bare minus", "-"],
    ["a trailing dot", "1."],
    ["a leading plus", "+1"],
    ["an empty exponent", "1e"],
    ["NaN", "NaN"],
    ["a trailing comma in an object", '{"a":1,}'],
    ["a trailing comma in an array", "[1,]"],
    ["single quotes", "'a'"],
    ["an unquoted key", "{a:1}"],
    ["a raw control character in a string", '"a\nb"'],
    ["an invalid escape", '"\\x41"'],
    ["a short \\u escape", '"\\u12"'],
    ["two values", "1 2"],
    ["nothing", ""],
    ["only whitespace", "  "],
    ["a comment", "[1 /* c */]"],
    ["an unterminated string", '"abc'],
    ["an unterminated object", '{"a":1'],
    ["a non-JSON whitespace (vertical tab)", "\v1"],
    ["a byte-order mark", "\ufeff{}"],
    ["invalid UTF-8", Buffer.from([0x22, 0xc3, 0x28, 0x22])],
    ["an encoded surrogate (CESU-8)", Buffer.from([0x22, 0xed, 0xa0, 0x80, 0x22])],
    ["a truncated literal", "tru"],
    ["a misspelt literal", "nul1"],
  ];

  it.each(refused)("refuses %s", (_name, input) => {
    expect(() => parse(input)).toThrow(StrictJsonError);
  });

  it("bounds the nesting depth", () => {
    expect(parseStrictJson(bytes(`${"[".repeat(128)}${"]".repeat(128)}`)).value).toBeDefined();
    expect(() => parse(`${"[".repeat(129)}${"]".repeat(129)}`)).toThrow(/nesting deeper than 128/);
    expect(() => parse(`${'{"a":'.repeat(100_000)}1${"}".repeat(100_000)}`)).toThrow(StrictJsonError);
    expect(() => parseStrictJson(bytes("[[[]]]"), { maxDepth: 2 })).toThrow(StrictJsonError);
  });

  it("refuses a huge number without a stack or range error", () => {
    expect(() => parse("9".repeat(1_000_000))).toThrow(/out of range/);
    expect(parse(`0.${"0".repeat(100_000)}1`).value).toBe(0);
  });

  it("agrees with JSON.parse on every JSON value (property)", () => {
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 6 }), (value) => {
        const text = JSON.stringify(value);
        expect(parse(text).value).toEqual(JSON.parse(text));
        const pretty = JSON.stringify(value, null, 2);
        expect(parse(pretty).value).toEqual(JSON.parse(pretty));
      }),
      { numRuns: 500 },
    );
  });

  it("never fails with anything but StrictJsonError, and accepts only what JSON.parse accepts (fuzz)", () => {
    const jsonish = fc.stringMatching(/^[\s{}[\]:,"\\a-z0-9.eE+-]{0,40}$/);
    fc.assert(
      fc.property(fc.oneof(fc.uint8Array({ maxLength: 64 }), jsonish.map(bytes)), (input) => {
        let ours: unknown;
        try {
          ours = parseStrictJson(input).value;
        } catch (e) {
          expect(e).toBeInstanceOf(StrictJsonError);
          return;
        }
        expect(ours).toEqual(JSON.parse(Buffer.from(input).toString("utf8")));
      }),
      { numRuns: 3_000 },
    );
  });

  it("gives top-level spans that re-parse to the member values (property)", () => {
    fc.assert(
      fc.property(fc.dictionary(fc.string(), fc.jsonValue({ maxDepth: 3 })), (obj) => {
        const buf = bytes(JSON.stringify(obj, null, 1));
        const { value, members } = parseStrictJson(buf);
        for (const [k, span] of members ?? []) {
          const member = (value as Record<string, unknown>)[k];
          expect(JSON.parse(buf.subarray(span.start, span.end).toString("utf8"))).toEqual(member);
        }
        expect(members?.size).toBe(Object.keys(obj).length);
      }),
      { numRuns: 300 },
    );
  });
});
