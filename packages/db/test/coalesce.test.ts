import { describe, expect, it } from "vitest";
import { coalesce } from "../src/coalesce.ts";

describe("coalesce (group commit)", () => {
  it("writes at once when idle and batches what queues behind busy flushes", async () => {
    const batches: number[][] = [];
    let release: () => void = () => {};
    const gate = new Promise<void>((r) => {
      release = r;
    });
    const write = coalesce<number>(
      async (items) => {
        batches.push(items);
        await gate;
      },
      { maxInFlight: 1, maxBatch: 10 },
    );
    const all = Promise.all([1, 2, 3, 4].map((n) => write(n)));
    release();
    await all;
    expect(batches).toEqual([[1], [2, 3, 4]]);
  });

  it("with spacing: the first item after a quiet spell goes at once, those within the spacing go together", async () => {
    const batches: number[][] = [];
    const write = coalesce<number>(
      async (items) => {
        batches.push(items);
      },
      { maxInFlight: 1, maxBatch: 3, spacingMs: 200 },
    );
    await write(1);
    // The first flush is done, but it started less than 200 ms ago: these wait and go as batches,
    // a full one (3) without waiting.
    await Promise.all([2, 3, 4, 5, 6].map((n) => write(n)));
    await new Promise((r) => setTimeout(r, 250));
    await write(7);
    expect(batches).toEqual([[1], [2, 3, 4], [5, 6], [7]]);
  });

  it("retries a failed batch item by item so one bad item fails alone", async () => {
    const write = coalesce<number>(
      async (items) => {
        if (items.includes(3)) throw new Error("bad row");
      },
      { maxInFlight: 1, maxBatch: 10 },
    );
    const results = await Promise.allSettled([1, 2, 3, 4].map((n) => write(n)));
    expect(results.map((r) => r.status)).toEqual(["fulfilled", "fulfilled", "rejected", "fulfilled"]);
  });

  it("a batch that fails because the store is unreachable (even wrapped) is not split into N more attempts", async () => {
    const flushed: number[][] = [];
    let release: () => void = () => {};
    const gate = new Promise<void>((r) => {
      release = r;
    });
    const write = coalesce<number>(
      async (items) => {
        flushed.push(items);
        if (items.length === 1 && items[0] === 1) return gate;
        // What drizzle's query builder throws: the driver's error as `cause`.
        throw new Error("Failed query", {
          cause: Object.assign(new Error("refused"), { code: "ECONNREFUSED" }),
        });
      },
      { maxInFlight: 1, maxBatch: 10 },
    );
    const first = write(1);
    const rest = Promise.allSettled([2, 3, 4].map((n) => write(n)));
    release();
    await first;
    expect((await rest).map((r) => r.status)).toEqual(["rejected", "rejected", "rejected"]);
    expect(flushed).toEqual([[1], [2, 3, 4]]);
  });
});
