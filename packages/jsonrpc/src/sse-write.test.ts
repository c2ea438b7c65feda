import { describe, expect, it } from "vitest";
import { isResponseEvent } from "./collect.ts";
import { isEventStream, SseParser, sseBlocks, sseComment, sseDataLines, sseEvent } from "./sse.ts";

const enc = new TextEncoder();

describe("isEventStream", () => {
  it("recognises text/event-stream with parameters and any case", () => {
    expect(isEventStream("text/event-stream")).toBe(true);
    expect(isEventStream("Text/Event-Stream; charset=utf-8")).toBe(true);
    expect(isEventStream("application/json")).toBe(false);
    expect(isEventStream("text/event-streamx")).toBe(false);
    expect(isEventStream(null)).toBe(false);
  });
});

describe("writing events", () => {
  const read = (text: string) => {
    const p = new SseParser();
    return [...p.push(enc.encode(text)), ...p.end()];
  };

  it("writes every line of multi-line data as its own data line, whatever the line ends", () => {
    const text = sseEvent({ event: "message", id: "7", data: "a\nb\r\nc\rd" });
    expect(text).toBe("event: message\nid: 7\ndata: a\ndata: b\ndata: c\ndata: d\n\n");
    expect(read(text)).toEqual([{ event: "message", data: "a\nb\nc\nd", id: "7" }]);
  });

  it("round-trips data through the parser: empty, leading spaces, colons, unicode", () => {
    for (const data of ["", " lead", "a: b", "::", "ünï 𝄞", '{"jsonrpc":"2.0"}', "\n", "x\n\ny"]) {
      expect(read(sseEvent({ data })), JSON.stringify(data)).toEqual([{ event: "message", data, id: "" }]);
    }
  });

  it("refuses a line break in event or id (field injection) and NUL in an id", () => {
    expect(() => sseEvent({ data: "x", event: "a\ndata: injected" })).toThrow(TypeError);
    expect(() => sseEvent({ data: "x", id: "1\r" })).toThrow(TypeError);
    expect(() => sseEvent({ data: "x", id: "1\0" })).toThrow(TypeError);
  });

  it("writes retry, data lines alone and comments that readers skip", () => {
    expect(sseEvent({ data: "x", retryMs: 1500.7 })).toBe("retry: 1500\ndata: x\n\n");
    expect(sseDataLines("a\nb")).toBe("data: a\ndata: b\n");
    expect(sseComment("keep\nalive")).toBe(": keep alive\n\n");
    expect(read(`${sseComment("keepalive")}${sseEvent({ data: "y" })}`)).toEqual([
      { event: "message", data: "y", id: "" },
    ]);
  });
});

describe("sseBlocks", () => {
  it("gives each closed event with its exact extent, and not the one left open", () => {
    const text = ": c\r\nevent: a\r\ndata: 1\r\ndata: 2\r\n\r\nid: 5\n\ndata: open";
    const blocks = sseBlocks(text);
    expect(blocks.map((b) => text.slice(b.start, b.end))).toEqual([
      ": c\r\nevent: a\r\ndata: 1\r\ndata: 2\r\n\r\n",
      "id: 5\n\n",
    ]);
    expect(blocks.map((b) => [b.event, b.data])).toEqual([
      ["a", "1\n2"],
      ["message", null],
    ]);
    expect(blocks[0]?.lines.map((l) => l.raw)).toEqual([
      ": c\r\n",
      "event: a\r\n",
      "data: 1\r\n",
      "data: 2\r\n",
    ]);
  });

  it("finds the response event by id with isResponseEvent", () => {
    const text = 'data: {"jsonrpc":"2.0","method":"n"}\n\ndata: {"jsonrpc":"2.0","id":1,"result":{}}\n\n';
    const found = sseBlocks(text).filter((b) => isResponseEvent(b, 1));
    expect(found.map((b) => b.data)).toEqual(['{"jsonrpc":"2.0","id":1,"result":{}}']);
    expect(sseBlocks(text).some((b) => isResponseEvent(b, "1"))).toBe(false);
  });
});
