import { describe, expect, it } from "vitest";
import { coalesce } from "../src/repos/coalesce.ts";

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
});
