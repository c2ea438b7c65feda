import canonicalize from "canonicalize";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { canonicalJson } from "../src/json/canonical.ts";
import { parseStrictJson } from "../src/json/strict-parse.ts";

const fromHex = (hex: string) => {
  const view = new DataView(new ArrayBuffer(8));
  view.setBigUint64(0, BigInt(`0x${hex}`));
  return view.getFloat64(0);
};
const canon = (text: string) => canonicalJson(parseStrictJson(Buffer.from(text, "utf8")).value);

describe("canonicalJson (RFC 8785)", () => {
  it("serialises the RFC's IEEE 754 number samples (Appendix B)", () => {
    const samples: Array<[string, string]> = [
      ["0000000000000000", "0"],
      ["8000000000000000", "0"],
      ["0000000000000001", "5e-324"],
      ["8000000000000001", "-5e-324"],
      ["7fefffffffffffff", "1.7976931348623157e+308"],
      ["ffefffffffffffff", "-1.7976931348623157e+308"],
      ["4340000000000000", "9007199254740992"],
      ["c340000000000000", "-9007199254740992"],
      ["4430000000000000", "295147905179352830000"],
      ["44b52d02c7e14af5", "9.999999999999997e+22"],
      ["44b52d02c7e14af6", "1e+23"],
      ["44b52d02c7e14af7", "1.0000000000000001e+23"],
      ["444b1ae4d6e2ef4e", "999999999999999700000"],
      ["444b1ae4d6e2ef4f", "999999999999999900000"],
      ["444b1ae4d6e2ef50", "1e+21"],
      ["3eb0c6f7a0b5ed8c", "9.999999999999997e-7"],
      ["3eb0c6f7a0b5ed8d", "0.000001"],
      ["41b3de4355555553", "333333333.3333332"],
      ["41b3de4355555554", "333333333.33333325"],
      ["41b3de4355555555", "333333333.3333333"],
      ["41b3de4355555556", "333333333.3333334"],
      ["41b3de4355555557", "333333333.33333343"],
      ["becbf647612f3696", "-0.0000033333333333333333"],
      ["43143ff3c1cb0959", "1424953923781206.2"],
    ];
    for (const [hex, expected] of samples) expect(canonicalJson(fromHex(hex))).toBe(expected);
  });

  it("refuses NaN and infinities, lone surrogates and non-JSON values", () => {
    expect(() => canonicalJson(fromHex("7ff0000000000000"))).toThrow();
    expect(() => canonicalJson(Number.NaN)).toThrow();
    expect(() => canonicalJson("\ud800")).toThrow();
    expect(() => canonicalJson({ a: undefined })).toThrow();
    expect(() => canonicalJson(() => 1)).toThrow();
  });

  it("canonicalises the RFC's §3.2.2 example", () => {
    const input = `{
      "numbers": [333333333.33333329, 1E30, 4.50, 2e-3, 0.000000000000000000000000001],
      "string": "\\u20ac$\\u000F\\u000aA'\\u0042\\u0022\\u005c\\\\\\"\\/",
      "literals": [null, true, false]
    }`;
    expect(canon(input)).toBe(
      '{"literals":[null,true,false],"numbers":[333333333.3333333,1e+30,4.5,0.002,1e-27],' +
        '"string":"€$\\u000f\\nA\'B\\"\\\\\\\\\\"/"}',
    );
  });

  it("sorts members by UTF-16 code units (the RFC's §3.2.3 example)", () => {
    const input = `{
      "\\u20ac": "Euro Sign",
      "\\r": "Carriage Return",
      "\\ufb33": "Hebrew Letter Dalet With Dagesh",
      "1": "One",
      "\\ud83d\\ude00": "Emoji: Grinning Face",
      "\\u0080": "Control",
      "\\u00f6": "Latin Small Letter O With Diaeresis"
    }`;
    expect(canon(input)).toBe(
      '{"\\r":"Carriage Return","1":"One","\u0080":"Control","ö":"Latin Small Letter O With Diaeresis",' +
        '"€":"Euro Sign","😀":"Emoji: Grinning Face","\ufb33":"Hebrew Letter Dalet With Dagesh"}',
    );
  });

  it("gives one text for equal values spelt differently, and different texts for different values", () => {
    const spellings = [
      '{"a":1,"b":[true,{"c":"x"}]}',
      '{ "b" : [ true , { "c" : "\\u0078" } ] , "a" : 1.0 }',
      '{"b":[true,{"c":"x"}],"a":1e0}',
      '{"a":10E-1,"b":[true,{"c":"x"}]}',
    ];
    const texts = new Set(spellings.map(canon));
    expect(texts.size).toBe(1);
    expect(canon('{"a":1.000001,"b":[true,{"c":"x"}]}')).not.toBe(canon(spellings[0] as string));
    expect(canon('{"a":1,"b":[{"c":"x"},true]}')).not.toBe(canon(spellings[0] as string));
  });

  it("agrees with the reference `canonicalize` package on random JSON (property)", () => {
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 5 }), (value) => {
        expect(canonicalJson(value)).toBe(canonicalize(value));
      }),
      { numRuns: 1_000 },
    );
  });
});
