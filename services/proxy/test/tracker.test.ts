// @stores once: the tracker is the process's own count of background promises, no store involved.
import { describe, expect, it } from "vitest";
import { createTracker } from "../src/tracker.ts";

/** A promise settled from outside, as a record write is by its flush. */
function pending() {
  let resolve!: () => void;
  let reject!: (e: Error) => void;
  const promise = new Promise<void>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

describe("in-flight tracker", () => {
  it("drain waits for every tracked promise, a rejected one included, and for those tracked meanwhile", async () => {
    const tracker = createTracker();
    await tracker.drain(); // nothing tracked: at once
    const first = pending();
    const second = pending();
    tracker.track(first.promise);
    tracker.track(second.promise);
    expect(tracker.size()).toBe(2);
    let drained = false;
    const draining = tracker.drain().then(() => {
      drained = true;
    });
    first.reject(new Error("record failed"));
    await first.promise.catch(() => {});
    expect(drained).toBe(false);
    // Tracked while the drain waits: the drain waits for it too.
    const late = pending();
    tracker.track(late.promise);
    second.resolve();
    await second.promise;
    await new Promise((r) => setImmediate(r));
    expect(drained).toBe(false);
    expect(tracker.size()).toBe(1);
    late.resolve();
    await draining;
    expect(drained).toBe(true);
    expect(tracker.size()).toBe(0);
  });
});
