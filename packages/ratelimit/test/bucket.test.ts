import { createLogger } from "@gw/telemetry";
import { describe, expect, it } from "vitest";
import { retryAfterSeconds, takeToken } from "../src/bucket.ts";
import { createRateLimiter } from "../src/limiter.ts";
import { createMemoryBuckets } from "../src/memory.ts";

/** A clock the test moves by hand. */
function clock(start = 1_000) {
  let t = start;
  return {
    now: () => t,
    advance: (ms: number) => {
      t += ms;
    },
  };
}

function admitted(take: () => { allowed: boolean }, attempts: number): number {
  let n = 0;
  for (let i = 0; i < attempts; i++) if (take().allowed) n++;
  return n;
}

describe("token bucket maths", () => {
  it("a new bucket admits exactly burst, then denies", () => {
    const c = clock();
    const b = createMemoryBuckets({ now: c.now });
    expect(admitted(() => b.take("k", { rps: 1, burst: 5 }), 20)).toBe(5);
  });

  it("refills at rps, never beyond burst", () => {
    const c = clock();
    const b = createMemoryBuckets({ now: c.now });
    const limit = { rps: 2, burst: 3 };
    expect(admitted(() => b.take("k", limit), 10)).toBe(3);
    c.advance(1_000);
    expect(admitted(() => b.take("k", limit), 10)).toBe(2);
    c.advance(3_600_000);
    expect(admitted(() => b.take("k", limit), 10)).toBe(3);
  });

  it("a fractional token is not enough, and the wait is the time to a whole one", () => {
    const limit = { rps: 4, burst: 1 };
    const first = takeToken(undefined, limit, 0);
    expect(first.allowed).toBe(true);
    const second = takeToken(first.state, limit, 100); // 0.4 tokens
    expect(second.allowed).toBe(false);
    expect(second.waitMs).toBeCloseTo(150);
    expect(takeToken(first.state, limit, 250).allowed).toBe(true);
  });

  it("a denial leaves the bucket as it was", () => {
    const limit = { rps: 1, burst: 1 };
    const { state } = takeToken(undefined, limit, 0);
    const denied = takeToken(state, limit, 500);
    expect(denied.state).toEqual(state);
  });

  it("a smaller burst clamps a fuller bucket at once; a larger one grants nothing", () => {
    const c = clock();
    const b = createMemoryBuckets({ now: c.now });
    expect(b.take("k", { rps: 0.001, burst: 10 }).allowed).toBe(true); // 9 left
    expect(admitted(() => b.take("k", { rps: 0.001, burst: 2 }), 10)).toBe(2);
    expect(b.take("k", { rps: 0.001, burst: 100 }).allowed).toBe(false);
  });

  it("a changed rate applies to the time since the last take", () => {
    const c = clock();
    const b = createMemoryBuckets({ now: c.now });
    expect(admitted(() => b.take("k", { rps: 0.001, burst: 5 }), 10)).toBe(5);
    c.advance(1_000);
    expect(admitted(() => b.take("k", { rps: 3, burst: 5 }), 10)).toBe(3);
  });

  it("buckets are independent per key", () => {
    const c = clock();
    const b = createMemoryBuckets({ now: c.now });
    expect(admitted(() => b.take("a", { rps: 1, burst: 2 }), 5)).toBe(2);
    expect(admitted(() => b.take("b", { rps: 1, burst: 2 }), 5)).toBe(2);
  });
});

describe("idle buckets are evicted", () => {
  it("drops buckets that refilled to full and keeps the others", () => {
    const c = clock();
    const b = createMemoryBuckets({ now: c.now, sweepEveryMs: 1_000 });
    for (let i = 0; i < 100; i++) b.take(`idle-${i}`, { rps: 10, burst: 10 }); // full again in 100 ms
    b.take("slow", { rps: 0.001, burst: 10 }); // full again in 1000 s
    expect(b.size()).toBe(101);
    c.advance(2_000);
    b.take("new", { rps: 10, burst: 10 });
    expect(b.size()).toBe(2);
    // the kept bucket kept its count: 9 tokens left, not a fresh 10
    expect(admitted(() => b.take("slow", { rps: 0.001, burst: 10 }), 20)).toBe(9);
  });
});

describe("Retry-After", () => {
  it.each([
    [0, 1],
    [1, 1],
    [999, 1],
    [1_000, 1],
    [1_001, 2],
    [59_500, 60],
    [60_001, 60],
    [1e9, 60],
    [Number.POSITIVE_INFINITY, 60],
    [Number.NaN, 60],
  ])("waiting %d ms → %d s", (waitMs, seconds) => {
    expect(retryAfterSeconds(waitMs)).toBe(seconds);
  });
});

describe("limiter without Redis", () => {
  it("keeps buckets in the process and answers a denial with Retry-After", async () => {
    const limiter = createRateLimiter({ logger: createLogger({ level: "silent", service: "test" }) });
    expect(limiter.store).toBe("memory");
    const key = { tenantId: "t_1", agentId: "agt_1" };
    expect(await limiter.take(key, { rps: 0.5, burst: 1 })).toEqual({ allowed: true });
    expect(await limiter.take(key, { rps: 0.5, burst: 1 })).toEqual({ allowed: false, retryAfterSeconds: 2 });
    expect(await limiter.take({ tenantId: "t_2", agentId: "agt_1" }, { rps: 0.5, burst: 1 })).toEqual({
      allowed: true,
    });
  });
});
