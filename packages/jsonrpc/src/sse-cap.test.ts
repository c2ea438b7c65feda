import { describe, expect, it } from "vitest";
import { FrameTooLargeError, SseParser } from "./sse.ts";

const enc = new TextEncoder();

describe("SseParser: the event size cap", () => {
  const cap = 64;

  it("passes events up to the cap, counting UTF-8 bytes of the line being read", () => {
    // 4-byte characters (two UTF-16 units each): "data: " and 14 of them are 62 bytes, 17 are 74.
    const data = "𝄞".repeat(14);
    const p = new SseParser({ maxEventBytes: cap });
    expect(p.push(enc.encode(`data: ${data}\n\n`))).toEqual([{ event: "message", data, id: "" }]);
    const over = new SseParser({ maxEventBytes: cap });
    expect(() => over.push(enc.encode(`data: ${"𝄞".repeat(17)}\n\n`))).toThrow(FrameTooLargeError);
  });

  it("refuses a line that never ends, fed in small chunks, as soon as it passes the cap", () => {
    const p = new SseParser({ maxEventBytes: cap });
    let fed = 0;
    const err = (() => {
      try {
        for (;;) {
          p.push(enc.encode("data: xxxxxxx"));
          fed += 13;
        }
      } catch (e) {
        return e;
      }
    })();
    expect(err).toBeInstanceOf(FrameTooLargeError);
    expect(err).toMatchObject({ code: "GW_FRAME_TOO_LARGE", maxBytes: cap });
    expect(fed).toBeLessThanOrEqual(cap);
  });

  it("refuses an event of many short data lines that passes the cap, and counts each event afresh", () => {
    const ok = new SseParser({ maxEventBytes: cap });
    const line = "data: 0123456789\n";
    // Many events each under the cap: the count starts again after every blank line.
    for (let i = 0; i < 50; i++) expect(ok.push(enc.encode(`${line}${line}\n`))).toHaveLength(1);
    const p = new SseParser({ maxEventBytes: cap });
    expect(() => {
      for (let i = 0; i < 10; i++) p.push(enc.encode(line));
    }).toThrow(FrameTooLargeError);
  });

  it("does not count comments and other fields against the event", () => {
    const p = new SseParser({ maxEventBytes: cap });
    const comment = `: ${"k".repeat(40)}\n`;
    const events = p.push(enc.encode(`${comment.repeat(10)}data: x\n\n`));
    expect(events).toEqual([{ event: "message", data: "x", id: "" }]);
  });
});
