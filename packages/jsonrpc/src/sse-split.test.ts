import { describe, expect, it } from "vitest";
import { SseSplitter } from "./sse-split.ts";

const STREAM =
  'data: {"a":1}\n\n: comment\n\nevent: x\r\ndata: é😀\r\n\r\ndata: 1\rdata: 2\r\rid: 7\n\ndata: open';

function split(
  input: Buffer,
  sizes: number[],
  max = 1024,
): { events: string[]; rest: string; over: boolean } {
  const s = new SseSplitter(max);
  const events: Buffer[] = [];
  let at = 0;
  let n = 0;
  while (at < input.length) {
    const size = sizes[n++ % sizes.length] as number;
    events.push(...s.push(input.subarray(at, at + size)));
    at += size;
  }
  return { events: events.map((e) => e.toString("utf8")), rest: s.rest().toString("utf8"), over: s.over };
}

describe("SseSplitter", () => {
  it("splits at blank lines (LF, CRLF, CR), byte for byte, however the chunks fall", () => {
    const input = Buffer.from(STREAM);
    const whole = split(input, [input.length]);
    expect(whole.events).toEqual([
      'data: {"a":1}\n\n',
      ": comment\n\n",
      "event: x\r\ndata: é😀\r\n\r\n",
      "data: 1\rdata: 2\r\r",
      "id: 7\n\n",
    ]);
    expect(whole.rest).toBe("data: open");
    for (const sizes of [[1], [2], [3, 5], [7, 1, 2]]) {
      const out = split(input, sizes);
      expect(Buffer.from(out.events.join("") + out.rest)).toEqual(input);
      expect(out.events.length).toBe(5);
    }
  });

  it("a CRLF blank line split after its CR: the LF opens the next event's bytes", () => {
    const s = new SseSplitter(100);
    expect(s.push(Buffer.from("data: a\r\n\r")).map(String)).toEqual(["data: a\r\n\r"]);
    expect(s.push(Buffer.from("\ndata: b\n\n")).map(String)).toEqual(["\ndata: b\n\n"]);
  });

  it("an event over the bound spends the splitter; the events before it are returned", () => {
    const s = new SseSplitter(16);
    expect(s.push(Buffer.from("data: ok\n\ndata: 0123456789abcdef\n\n")).map(String)).toEqual([
      "data: ok\n\n",
    ]);
    expect(s.over).toBe(true);
    expect(s.push(Buffer.from("data: x\n\n"))).toEqual([]);
    const t = new SseSplitter(16);
    t.push(Buffer.from("data: 0123456"));
    expect(t.over).toBe(false);
    t.push(Buffer.from("789abcdef"));
    expect(t.over).toBe(true);
    expect(t.rest().length).toBe(0);
  });
});
