import type { CompiledPolicy } from "@gw/policy";
import { describe, expect, it } from "vitest";
import { createListCache } from "../src/list-cache.ts";

// The remembered lists answer only an answer that differs from the remembered one in its id, for
// the same policy object and catalog view; everything else must take the full filter.

const policy = {} as CompiledPolicy;
const other = {} as CompiledPolicy;
const view = new Map();
const text = (id: unknown, tools = '[{"name":"a"},{"name":"admin"}]') =>
  `{"jsonrpc":"2.0","result":{"tools":${tools},"nextCursor":"n"},"id":${JSON.stringify(id)}}`;
const out = (id: unknown) => text(id, '[{"name":"a"}]');

function cacheWith(id: unknown, now = () => 0) {
  const c = createListCache(now);
  c.put("k", { policy, view, raw: Buffer.from(text(id)), text: text(id), out: out(id) });
  return c;
}

describe("list cache", () => {
  it("splices the remembered filtered array into an answer that differs only in its id", () => {
    const c = cacheWith(1);
    for (const id of [1, 12345, "req-7"]) {
      const hit = c.get("k", policy, view, Buffer.from(text(id)), id);
      expect(hit?.body.toString()).toBe(out(id));
    }
  });

  it("misses on another id than the request's, other bytes, another policy, view or key", () => {
    const c = cacheWith(1);
    expect(c.get("k", policy, view, Buffer.from(text(2)), 3)).toBeNull();
    expect(c.get("k", policy, view, Buffer.from(text(2, '[{"name":"b"}]')), 2)).toBeNull();
    expect(c.get("k", other, view, Buffer.from(text(2)), 2)).toBeNull();
    expect(c.get("k", policy, new Map(), Buffer.from(text(2)), 2)).toBeNull();
    expect(c.get("k2", policy, view, Buffer.from(text(2)), 2)).toBeNull();
    // An id region that is not one JSON value is not an id.
    expect(c.get("k", policy, view, Buffer.from(text(1).replace('"id":1', '"id":1,"x":2')), 1)).toBeNull();
  });

  it("an answer left whole is returned as it came; non-ASCII answers are not remembered", () => {
    const c = createListCache();
    c.put("k", { policy, view, raw: Buffer.from(text(1)), text: text(1), out: text(1) });
    const raw = Buffer.from(text(9));
    expect(c.get("k", policy, view, raw, 9)?.body).toBe(raw);
    const wide = text(1, '[{"name":"é"}]');
    c.put("w", { policy, view, raw: Buffer.from(wide), text: wide, out: wide });
    expect(c.get("w", policy, view, Buffer.from(wide), 1)).toBeNull();
  });

  it("says when the tools should be learned again (after a minute)", () => {
    let t = 0;
    const c = cacheWith(1, () => t);
    expect(c.get("k", policy, view, Buffer.from(text(2)), 2)?.learned).toBe(true);
    t = 61_000;
    expect(c.get("k", policy, view, Buffer.from(text(3)), 3)?.learned).toBe(false);
    expect(c.get("k", policy, view, Buffer.from(text(4)), 4)?.learned).toBe(true);
  });
});
