import { readHeld } from "@gw/forward";
import { describe, expect, it } from "vitest";
import { toolPageOf } from "../src/answer.ts";
import { definitionOf, toolDigest } from "../src/digest.ts";
import { filterToolsJson } from "../src/filter.ts";
import { filterToolsSse } from "../src/sse-answer.ts";
import { Walks } from "../src/walks.ts";

const dropAdmin = (t: Record<string, unknown> | null) => t !== null && t.name !== "admin";

describe("digests", () => {
  it("ignore key order, number spelling, escapes and _meta; see any other change", () => {
    const a = toolDigest(definitionOf({ name: "a", inputSchema: { x: 1.0, y: "\u0061" }, _meta: { t: 1 } }));
    const b = toolDigest(JSON.parse('{"inputSchema":{"y":"a","x":1e0},"name":"a"}'));
    expect(a).toBe(b);
    expect(a).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(toolDigest({ name: "a", inputSchema: { x: 2, y: "a" } })).not.toBe(a);
  });
});

describe("filterToolsJson", () => {
  it("keeps every byte but the dropped entries, nested arrays and strings with brackets included", () => {
    const text =
      '{"id":"x]","jsonrpc":"2.0","result":{"tools":[{"name":"admin","d":"[{\\"}"},{"name":"ok","s":[1,[2,{}]]}],"nextCursor":null}}';
    expect(filterToolsJson(text, dropAdmin)).toBe(
      '{"id":"x]","jsonrpc":"2.0","result":{"tools":[{"name":"ok","s":[1,[2,{}]]}],"nextCursor":null}}',
    );
  });

  it("returns the text itself when nothing is dropped, and an error response unchanged", () => {
    const text = '{"jsonrpc":"2.0","id":1,"result":{"tools":[]}}';
    expect(filterToolsJson(text, dropAdmin)).toBe(text);
    const err = '{"jsonrpc":"2.0","id":1,"error":{"code":-1,"message":"no"}}';
    expect(filterToolsJson(err, dropAdmin)).toBe(err);
  });

  it("refuses what it cannot filter", () => {
    for (const bad of [
      "nope",
      '{"jsonrpc":"2.0","id":1,"result":{}}',
      '{"jsonrpc":"2.0","id":1,"result":{"tools":[],"tools":[{"name":"admin"}]}}',
      '[{"jsonrpc":"2.0","id":1,"result":{"tools":[]}}]',
    ]) {
      expect(filterToolsJson(bad, dropAdmin)).toBeNull();
    }
  });
});

describe("SSE answers", () => {
  it("finds the response event by id across CR, LF and CRLF lines and multi-line data", () => {
    const text =
      'data: {"jsonrpc":"2.0","id":2,"result":{}}\r\rdata: {"jsonrpc":"2.0",\ndata: "id":1,"result":{"tools":[]}}\n\n';
    const sse = { "content-type": "text/event-stream" };
    const held = readHeld(Buffer.from(text), sse, 1, 1 << 20);
    expect(held?.json).toBe('{"jsonrpc":"2.0",\n"id":1,"result":{"tools":[]}}');
    expect(held?.sse && filterToolsSse(held.sse, held.json, dropAdmin)).toBe(text);
    expect(readHeld(Buffer.from("data: {}\n\n"), sse, 1, 1 << 20)).toBeNull();
  });
});

describe("tool pages and walks", () => {
  it("learns the first of duplicate names and skips names that are not storable strings", () => {
    const page = toolPageOf(
      JSON.stringify({
        jsonrpc: "2.0",
        id: 1,
        result: {
          tools: [
            { name: "a", v: 1 },
            { name: "a", v: 2 },
            { name: 3 },
            { name: "" },
            { name: "n\u0000" },
            "x",
          ],
          nextCursor: "c",
        },
      }),
    );
    expect(page?.tools.map((t) => [t.name, t.definition.v])).toEqual([["a", 1]]);
    expect(page?.nextCursor).toBe("c");
  });

  it("completes a walk followed from its first page, never one that loops or began elsewhere", () => {
    const w = new Walks();
    expect(w.step("s", null, ["a"], "c1")).toBeNull();
    expect([...(w.step("s", "c1", ["b"], null) ?? [])]).toEqual(["a", "b"]);
    expect(w.step("s", "c9", ["x"], null)).toBeNull();
    expect(w.step("s", null, ["a"], "loop")).toBeNull();
    expect(w.step("s", "loop", ["a"], "loop")).toBeNull();
    expect(w.step("s", "loop", ["a"], null)).toBeNull();
    expect([...(w.step("s", null, ["only"], null) ?? [])]).toEqual(["only"]);
  });
});
