import { type BucketState, type Limit, msUntilFull, takeToken } from "./bucket.ts";

type Entry = BucketState & { fullAt: number };

export type MemoryBuckets = {
  /** One take; `waitMs` is the time until one token is available when denied. */
  take: (key: string, limit: Limit) => { allowed: boolean; waitMs: number };
  /** Buckets currently held (for tests and metrics). */
  size: () => number;
};

/**
 * Token buckets in a Map, for a single process (no REDIS_URL) and as the fallback when Redis does
 * not answer. Memory stays bounded: a bucket that has refilled to full is the same as no bucket,
 * so a sweep, run lazily at most once per `sweepEveryMs`, drops every such entry.
 */
export function createMemoryBuckets(opts: { now?: () => number; sweepEveryMs?: number } = {}): MemoryBuckets {
  const now = opts.now ?? (() => performance.now());
  const sweepEveryMs = opts.sweepEveryMs ?? 10_000;
  const buckets = new Map<string, Entry>();
  let nextSweep = now() + sweepEveryMs;

  function sweep(t: number) {
    for (const [key, entry] of buckets) if (entry.fullAt <= t) buckets.delete(key);
    nextSweep = t + sweepEveryMs;
  }

  return {
    take(key, limit) {
      const t = now();
      if (t >= nextSweep) sweep(t);
      const result = takeToken(buckets.get(key), limit, t);
      if (result.allowed) {
        buckets.set(key, { ...result.state, fullAt: t + msUntilFull(result.state.tokens, limit) });
      }
      return { allowed: result.allowed, waitMs: result.waitMs };
    },
    size: () => buckets.size,
  };
}
