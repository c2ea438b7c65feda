import { FrameTooLargeError, SseParser } from "@gw/jsonrpc";
import { describe, expect, it } from "vitest";
import { needles, SseDataReader } from "../src/protocols/sse-data.ts";

/** What the parser dispatches of a whole stream: the non-empty data, and whether the cap refused it. */
function parsed(bytes: Buffer, max: number): { data: string[]; over: boolean } {
  const parser = new SseParser({ maxEventBytes: max });
  const data: string[] = [];
  try {
    for (const e of parser.push(bytes)) if (e.data !== "") data.push(e.data);
  } catch (e) {
    if (!(e instanceof FrameTooLargeError)) throw e;
    return { data, over: true };
  }
  return { data, over: false };
}

/** What the parser dispatches of a stream fed one byte at a time: every event before a refused one. */
function bytewise(bytes: Buffer, max: number): { data: string[]; over: boolean } {
  const parser = new SseParser({ maxEventBytes: max });
  const data: string[] = [];
  try {
    for (let i = 0; i < bytes.length; i++) {
      for (const e of parser.push(bytes.subarray(i, i + 1))) if (e.data !== "") data.push(e.data);
    }
  } catch (e) {
    if (!(e instanceof FrameTooLargeError)) throw e;
    return { data, over: true };
  }
  return { data, over: false };
}

/** What the reader delivers of the same stream cut at `cuts`, with or without needles. */
function read(bytes: Buffer, cuts: number[], max: number, wanted: string[] | null) {
  const watched = wanted === null ? null : needles(...wanted);
  const data: string[] = [];
  const reader = new SseDataReader(max, { needles: () => watched, event: (d) => data.push(d) });
  let from = 0;
  try {
    for (const to of [...cuts, bytes.length]) {
      reader.push(bytes.subarray(from, to));
      from = to;
    }
  } catch (e) {
    if (!(e instanceof FrameTooLargeError)) throw e;
    return { data, over: true };
  }
  return { data, over: false };
}

const ev = (data: string, end = "\n") => `data: ${data}${end}${end}`;
const STREAMS: Record<string, Buffer> = {
  "LF events": Buffer.from(ev('{"a":1}') + ev('{"state":"x"}') + ev("plain")),
  "CRLF events": Buffer.from(ev('{"a":1}', "\r\n") + ev('{"state":"y"}', "\r\n") + ev("z", "\r\n")),
  "CR alone": Buffer.from('data: a\r\rdata: "state"\r\r'),
  "mixed line ends and blank lines of every kind": Buffer.from(
    'data: a\r\n\ndata: b\n\r\ndata: "state"\r\rdata:c\n\n\n\ndata: d\r\n\r\n\r\n',
  ),
  "fields, comments, multi-line data, empty data": Buffer.from(
    ': keep "state"\n\nevent: e\nid: 7\ndata: one\ndata: "state"\n\ndata:\n\ndata\n\nretry: 10\n\ndata:  two spaces\n\n',
  ),
  "a byte order mark that opens the stream": Buffer.from(`\uFEFF${ev("a")}${ev('"state"')}`),
  "a U+FEFF later, which is not a mark": Buffer.from(`${ev("a")}\uFEFFdata: hidden\n\n${ev("b")}`),
  "multi-byte and broken UTF-8": Buffer.concat([
    Buffer.from(ev('"state":"é€😀"')),
    Buffer.from("data: bad "),
    Buffer.from([0xe2, 0x82, 0x0a, 0x0a, 0xff]),
    Buffer.from("data: \\u0073\n\n"),
    Buffer.from([0x64, 0x61, 0x74, 0x61, 0x3a, 0xf0, 0x9f, 0x98]),
    Buffer.from("\n\n"),
  ]),
  "an event cut off by the end": Buffer.from(`${ev("a")}data: "state" never closed`),
};

describe("the SSE data reader", () => {
  for (const [name, bytes] of Object.entries(STREAMS)) {
    it(`delivers what the parser dispatches, cut anywhere: ${name}`, () => {
      const whole = parsed(bytes, 1 << 20);
      for (let i = 0; i <= bytes.length; i++) {
        expect(read(bytes, [i], 1 << 20, null), `cut at ${i}`).toEqual(whole);
        for (const j of [i + 1, i + 3]) {
          if (j <= bytes.length)
            expect(read(bytes, [i, j], 1 << 20, null), `cuts at ${i}, ${j}`).toEqual(whole);
        }
      }
    });

    it(`passes over only events that hold no needle: ${name}`, () => {
      const matters = (d: string) => d.includes('"state"') || d.includes("\\u");
      const whole = parsed(bytes, 1 << 20).data.filter(matters);
      for (let i = 0; i <= bytes.length; i++) {
        const got = read(bytes, [i], 1 << 20, ['"state"', "\\u"]).data;
        // What it delivers is what the parser dispatches, less some events a learner would not read.
        expect(got.filter(matters), `cut at ${i}`).toEqual(whole);
        expect(whole.length + got.filter((d) => !matters(d)).length).toBe(got.length);
      }
    });
  }

  it("refuses an event past the cap where the parser does, having read only events before it", () => {
    const bytes = Buffer.from(`${ev("small")}${ev("x".repeat(40))}${ev("after")}`);
    for (const max of [16, 30, 48, 64, 200]) {
      // Byte by byte, the parser returns every event that closed before the one it refuses.
      const before = bytewise(bytes, max);
      expect(before.over).toBe(parsed(bytes, max).over);
      for (let i = 0; i <= bytes.length; i++) {
        const got = read(bytes, [i], max, null);
        expect(got.over, `cap ${max}, cut at ${i}`).toBe(before.over);
        // Events of the chunk that held the refused one may be lost, as the parser loses them.
        expect(before.data.slice(0, got.data.length)).toEqual(got.data);
        if (!got.over) expect(got.data).toEqual(before.data);
      }
    }
    expect(parsed(bytes, 30).over).toBe(true);
    expect(read(bytes, [...bytes.keys()].slice(1), 30, null)).toEqual({ data: ["small"], over: true });
  });

  it("never decodes an event without a needle", () => {
    const data: string[] = [];
    const reader = new SseDataReader(1 << 20, { needles: () => needles("keep"), event: (d) => data.push(d) });
    reader.push(Buffer.from(`${ev("drop")}${ev("keep me")}${ev("drop too")}`));
    expect(data).toEqual(["keep me"]);
    expect(() => needles("é")).toThrow(TypeError);
  });
});
