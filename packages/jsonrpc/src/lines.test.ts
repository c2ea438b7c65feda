import { describe, expect, it } from "vitest";
import { firstLine, LineParser } from "./lines.ts";
import { FrameTooLargeError } from "./sse.ts";

const enc = new TextEncoder();

describe("LineParser", () => {
  const text = '{"a":"ü"}\n\n{"b":"𝄞"}\r\n{"c":3}';

  it("gives the same lines whatever byte offset the stream is split at, the unterminated last one at the end", () => {
    const bytes = enc.encode(text);
    for (let i = 0; i <= bytes.length; i++) {
      const p = new LineParser();
      const out = [...p.push(bytes.subarray(0, i)), ...p.push(bytes.subarray(i)), ...p.end()];
      expect(
        out.map((l) => JSON.parse(l.data)),
        `split at ${i}`,
      ).toEqual([{ a: "ü" }, { b: "𝄞" }, { c: 3 }]);
    }
  });

  it("refuses a line past the cap, in one chunk or in many", () => {
    expect(() => new LineParser({ maxLineBytes: 8 }).push(enc.encode("123456789\n"))).toThrow(
      FrameTooLargeError,
    );
    const p = new LineParser({ maxLineBytes: 8 });
    expect(() => {
      for (let i = 0; i < 10; i++) p.push(enc.encode("xx"));
    }).toThrow(FrameTooLargeError);
    expect(new LineParser({ maxLineBytes: 8 }).push(enc.encode("12345678\n"))).toEqual([
      { data: "12345678" },
    ]);
  });
});

describe("firstLine", () => {
  async function* chunks(...parts: string[]): AsyncGenerator<Buffer> {
    for (const p of parts) yield Buffer.from(p);
  }
  async function all(body: AsyncIterable<Buffer>) {
    const out: Buffer[] = [];
    for await (const c of body) out.push(c);
    return Buffer.concat(out).toString();
  }

  it("gives the first line and the whole body again", async () => {
    const { first, rest } = await firstLine(chunks('{"a"', ':1}\n{"b":2}\n', "tail"));
    expect(first).toBe('{"a":1}');
    expect(await all(rest)).toBe('{"a":1}\n{"b":2}\ntail');
  });

  it("stops holding past maxBytes and still gives the body whole", async () => {
    let pulled = 0;
    async function* endless(): AsyncGenerator<Buffer> {
      for (;;) {
        pulled++;
        yield Buffer.from("x".repeat(10));
        if (pulled > 1000) return;
      }
    }
    const { first } = await firstLine(endless(), 25);
    expect(first).toBe("x".repeat(30));
    expect(pulled).toBe(3);
  });
});
