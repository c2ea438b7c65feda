import { describe, expect, it } from "vitest";
import { collectJsonRpcFromSse, SseCollectError } from "./collect.ts";
import { type SseEvent, SseParser } from "./sse.ts";

const enc = new TextEncoder();
const dec = new TextDecoder();

/** What a streamable-HTTP MCP server can send for one tools/call, with every syntax SSE allows. */
const SAMPLE =
  "\uFEFF: a comment before anything\n" +
  "retry: 1500\n" +
  "id: prime-0\n" +
  "data:\n" +
  "\n" +
  "event: message\r\n" +
  "id: 1\r\n" +
  'data: {"jsonrpc":"2.0","method":"notifications/message",\r\n' +
  'data: "params":{"level":"info","data":"héllo 🌍"}}\r\n' +
  "\r\n" +
  ":keep-alive\r" +
  "id: 2\r" +
  'data: {"jsonrpc":"2.0","id":"srv-1","method":"sampling/createMessage",\r' +
  'data:"params":{}}\r' +
  "\r" +
  "event: message\n" +
  "id: 3\n" +
  'data: {"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text",\n' +
  'data:  "text":"ünïcödé ✓ 𝄞"}]}}\n' +
  "unknown-field: ignored\n" +
  "\n" +
  "event: other\r\n" +
  "data: not json\r\n" +
  "\r\n" +
  "data: an event no blank line closes";

const EXPECTED: SseEvent[] = [
  { event: "message", data: "", id: "prime-0" },
  {
    event: "message",
    data: '{"jsonrpc":"2.0","method":"notifications/message",\n"params":{"level":"info","data":"héllo 🌍"}}',
    id: "1",
  },
  {
    event: "message",
    data: '{"jsonrpc":"2.0","id":"srv-1","method":"sampling/createMessage",\n"params":{}}',
    id: "2",
  },
  {
    event: "message",
    data: '{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text",\n "text":"ünïcödé ✓ 𝄞"}]}}',
    id: "3",
  },
  { event: "other", data: "not json", id: "3" },
];

const RESPONSE_7 = EXPECTED[3]?.data ?? "";

function parseChunks(chunks: Uint8Array[]): SseEvent[] {
  const p = new SseParser();
  const events = chunks.flatMap((c) => p.push(c));
  return [...events, ...p.end()];
}

function splitAt(bytes: Uint8Array, ...offsets: number[]): Uint8Array[] {
  const cuts = [0, ...offsets, bytes.length];
  return cuts.slice(1).map((end, i) => bytes.subarray(cuts[i], end));
}

async function* streamOf(chunks: Uint8Array[]): AsyncGenerator<Uint8Array> {
  for (const c of chunks) yield c;
}

describe("SseParser", () => {
  const bytes = enc.encode(SAMPLE);

  it("parses the sample in one chunk", () => {
    expect(parseChunks([bytes])).toEqual(EXPECTED);
  });

  it("gives the same events whatever byte offset the stream is split at", () => {
    // Covers cuts between CR and LF, inside every multi-byte character, inside field names.
    for (let i = 0; i <= bytes.length; i++) {
      expect(parseChunks(splitAt(bytes, i)), `split at ${i}`).toEqual(EXPECTED);
    }
  });

  it("gives the same events for every pair of cuts and byte by byte", () => {
    for (let i = 1; i < bytes.length; i += 3) {
      for (let j = i; j < bytes.length; j += 5) {
        expect(parseChunks(splitAt(bytes, i, j)), `split at ${i},${j}`).toEqual(EXPECTED);
      }
    }
    expect(parseChunks([...bytes].map((b) => new Uint8Array([b])))).toEqual(EXPECTED);
  });

  it("tracks the last event id and the reconnection time", () => {
    const p = new SseParser();
    p.push(bytes);
    expect(p.lastEventId).toBe("3");
    expect(p.retryMs).toBe(1500);
  });

  it("keeps the last event id across events without an id, and ignores ids with NUL", () => {
    const events = parseChunks([enc.encode("id: a\ndata: 1\n\ndata: 2\n\nid: b\0c\ndata: 3\n\n")]);
    expect(events.map((e) => e.id)).toEqual(["a", "a", "a"]);
  });

  it("strips exactly one space after the colon and treats a bare field name as an empty value", () => {
    const events = parseChunks([enc.encode("data:  two spaces\n\ndata\n\ndata:x\ndata\n\n")]);
    expect(events.map((e) => e.data)).toEqual([" two spaces", "", "x\n"]);
  });

  it("dispatches nothing for blocks without data, and resets the event type after each event", () => {
    const events = parseChunks([
      enc.encode("event: a\n\nid: 9\n\ndata: x\n\nevent: b\ndata: y\n\ndata: z\n\n"),
    ]);
    expect(events).toEqual([
      { event: "message", data: "x", id: "9" },
      { event: "b", data: "y", id: "9" },
      { event: "message", data: "z", id: "9" },
    ]);
  });

  it("treats CR CR as two line ends when the chunk ends between them", () => {
    expect(parseChunks([enc.encode("data: a\r"), enc.encode("\rdata: b\r\n\r\n")])).toEqual([
      { event: "message", data: "a", id: "" },
      { event: "message", data: "b", id: "" },
    ]);
  });

  it("drops an event the stream ends in the middle of, whatever was read of it", () => {
    for (const tail of ["data: cut", "data: cut\n", "event: x\ndata: cut\r\n", "data: a\ndata: b\r"]) {
      const p = new SseParser();
      expect(p.push(enc.encode(`data: whole\n\n${tail}`)), tail).toEqual([
        { event: "message", data: "whole", id: "" },
      ]);
      expect(p.end(), tail).toEqual([]);
    }
  });

  it("ends a CR-terminated line at the chunk's end and dispatches on the next chunk's blank line", () => {
    const p = new SseParser();
    expect(p.push(enc.encode("data: a\r"))).toEqual([]);
    expect(p.push(enc.encode("\n"))).toEqual([]);
    expect(p.push(enc.encode("\r\n"))).toEqual([{ event: "message", data: "a", id: "" }]);
  });

  it("parses a long line fed in tiny chunks", () => {
    const long = "x".repeat(200_000);
    const text = enc.encode(`data: ${long}\n\n`);
    const chunks: Uint8Array[] = [];
    for (let i = 0; i < text.length; i += 7) chunks.push(text.subarray(i, i + 7));
    expect(parseChunks(chunks)).toEqual([{ event: "message", data: long, id: "" }]);
  });

  it("decodes broken and split UTF-8 as a TextDecoder does, and drops only the stream's first BOM", () => {
    const bytes = [
      ...[0xef, 0xbb, 0xbf], // a BOM that starts the stream: dropped
      ...enc.encode("data: \uFEFFa"), // one inside: kept
      ...[0xf0, 0x9f, 0x98, 0x80, 0xe2, 0x82, 0x28, 0xff, 0xed, 0xa0, 0x80, 0xc3],
      ...enc.encode("\n\n"),
    ];
    const text = new TextDecoder().decode(new Uint8Array(bytes)).slice("data: ".length, -2);
    for (let cut = 0; cut <= bytes.length; cut++) {
      for (const size of [1, 2, 3]) {
        const chunks = [new Uint8Array(bytes.slice(0, cut))];
        for (let i = cut; i < bytes.length; i += size) chunks.push(new Uint8Array(bytes.slice(i, i + size)));
        expect(parseChunks(chunks)).toEqual([{ event: "message", data: text, id: "" }]);
      }
    }
  });
});

describe("collectJsonRpcFromSse", () => {
  const bytes = enc.encode(SAMPLE);

  it("returns the response with the request's id, skipping the notification and the server request", async () => {
    const out = await collectJsonRpcFromSse(streamOf([bytes]), 7, { maxBytes: 1 << 20 });
    expect(dec.decode(out)).toBe(RESPONSE_7);
    expect(JSON.parse(dec.decode(out))).toEqual({
      jsonrpc: "2.0",
      id: 7,
      result: { content: [{ type: "text", text: "ünïcödé ✓ 𝄞" }] },
    });
  });

  it("finds the response whatever offset the stream is split at", async () => {
    for (let i = 0; i <= bytes.length; i++) {
      const out = await collectJsonRpcFromSse(streamOf(splitAt(bytes, i)), 7, { maxBytes: 1 << 20 });
      expect(dec.decode(out), `split at ${i}`).toBe(RESPONSE_7);
    }
  });

  it("matches the id by type as well as value", async () => {
    const s =
      'data: {"jsonrpc":"2.0","id":"7","result":{"a":1}}\n\ndata: {"jsonrpc":"2.0","id":7,"result":{"a":2}}\n\n';
    const out = await collectJsonRpcFromSse(streamOf([enc.encode(s)]), 7, { maxBytes: 4096 });
    expect(JSON.parse(dec.decode(out)).result).toEqual({ a: 2 });
    const str = await collectJsonRpcFromSse(streamOf([enc.encode(s)]), "7", { maxBytes: 4096 });
    expect(JSON.parse(dec.decode(str)).result).toEqual({ a: 1 });
  });

  it("returns an error response too", async () => {
    const s = 'data: {"jsonrpc":"2.0","id":"r1","error":{"code":-32602,"message":"unknown tool"}}\n\n';
    const out = await collectJsonRpcFromSse(streamOf([enc.encode(s)]), "r1", { maxBytes: 4096 });
    expect(JSON.parse(dec.decode(out)).error.code).toBe(-32602);
  });

  it("stops reading once the response has arrived", async () => {
    let pulled = 0;
    async function* endless(): AsyncGenerator<Uint8Array> {
      pulled++;
      yield enc.encode('data: {"jsonrpc":"2.0","id":1,"result":{}}\n\n');
      for (;;) {
        pulled++;
        yield enc.encode(": keep-alive\n");
      }
    }
    await collectJsonRpcFromSse(endless(), 1, { maxBytes: 4096 });
    expect(pulled).toBe(1);
  });

  it("fails with no_response when the stream ends without the response", async () => {
    const err = await collectJsonRpcFromSse(streamOf([bytes]), 8, { maxBytes: 1 << 20 }).catch((e) => e);
    expect(err).toBeInstanceOf(SseCollectError);
    expect(err.reason).toBe("no_response");
  });

  it("does not take a response left open at the end of the stream", async () => {
    const s = 'data: {"jsonrpc":"2.0","id":1,"result":{}}\n';
    const err = await collectJsonRpcFromSse(streamOf([enc.encode(s)]), 1, { maxBytes: 4096 }).catch((e) => e);
    expect(err).toMatchObject({ name: "SseCollectError", reason: "no_response" });
  });

  it("fails with no_response on an empty stream", async () => {
    const err = await collectJsonRpcFromSse(streamOf([]), 1, { maxBytes: 4096 }).catch((e) => e);
    expect(err).toMatchObject({ reason: "no_response" });
  });

  it("fails with too_large once more than maxBytes were read, counting skipped events", async () => {
    const note = enc.encode(`data: {"jsonrpc":"2.0","method":"notifications/progress","params":{}}\n\n`);
    const response = enc.encode('data: {"jsonrpc":"2.0","id":1,"result":{}}\n\n');
    const chunks = [note, note, note, response];
    const total = chunks.reduce((n, c) => n + c.length, 0);
    const err = await collectJsonRpcFromSse(streamOf(chunks), 1, { maxBytes: total - 1 }).catch((e) => e);
    expect(err).toMatchObject({ reason: "too_large" });
    const ok = await collectJsonRpcFromSse(streamOf(chunks), 1, { maxBytes: total });
    expect(dec.decode(ok)).toBe('{"jsonrpc":"2.0","id":1,"result":{}}');
  });

  it("reads a Web ReadableStream", async () => {
    const body = new Response(bytes).body;
    if (!body) throw new Error("no body");
    const out = await collectJsonRpcFromSse(body, 7, { maxBytes: 1 << 20 });
    expect(dec.decode(out)).toBe(RESPONSE_7);
  });
});
