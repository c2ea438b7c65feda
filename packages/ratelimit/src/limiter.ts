import { DomainError } from "@gw/core";
import { type Logger, recordRateLimitFallback, recordRateLimitRejection } from "@gw/telemetry";
import type { Redis } from "ioredis";
import { type BucketKey, type Limit, retryAfterSeconds, type TakeResult } from "./bucket.ts";
import { createMemoryBuckets } from "./memory.ts";
import { bucketKey, redisTake } from "./redis.ts";
import { redisFallback } from "./redis-fallback.ts";

export type RateLimiter = {
  /**
   * Takes one token from the (tenant, agent) bucket with the given parameters. Never throws.
   * Answers at once (no promise) when this process decides alone: a live lease, or the buckets in
   * memory; a promise when Redis is asked.
   */
  take: (key: BucketKey, limit: Limit) => TakeResult | Promise<TakeResult>;
  /** Where buckets live: shared in Redis, or in this process only. */
  readonly store: "redis" | "memory";
};

/** How long a replica may spend tokens it leased from the shared bucket. */
export const LEASE_MS = 100;
/** The most tokens one lease holds. */
export const LEASE_MAX = 64;

/**
 * The largest lease for a bucket: an eighth of its burst, at most LEASE_MAX, at least 1. A small
 * bucket (burst < 16) is never leased from: every take is one exact shared take.
 */
export function leaseCap(limit: Limit): number {
  return Math.max(1, Math.min(LEASE_MAX, Math.floor(limit.burst / 8)));
}

type Lease = { tokens: number; until: number; size: number };

/** The one answer to an admitted take: shared, so the hot path allocates none. */
const ALLOWED: TakeResult = Object.freeze({ allowed: true });

/**
 * The per-(tenant, agent) token bucket of docs/rate-limit.md. With `redis` the buckets are
 * shared by every replica through one atomic script; without it they live in this process.
 *
 * Leases (docs/rate-limit.md): a replica takes up to `leaseCap(limit)` tokens from the shared
 * bucket in one round trip and spends them locally for at most LEASE_MS, so a busy agent costs one
 * Redis call per lease, not per call. The lease grows (doubling) while it is used up in time and
 * shrinks when it expires unused; a lease in use that falls under a quarter, or into the last
 * quarter of its time, is refilled ahead, so a steady load never waits for Redis. No call is ever admitted that the shared bucket did not grant:
 * the cost of leasing is bounded under-admission (tokens a replica leased and did not use).
 *
 * Redis outage: fail open to per-replica in-memory buckets (docs/rate-limit.md explains why). A
 * take waits for Redis at most `timeoutMs`; after a failure, Redis is skipped and probed again by
 * one take at most every `retryRedisAfterMs`, so a dead or hung Redis adds no latency to the hot
 * path. Entering and leaving the fallback is logged once each, every fallback take is counted.
 */
export function createRateLimiter(opts: {
  redis?: Redis | undefined;
  logger: Logger;
  timeoutMs?: number;
  retryRedisAfterMs?: number;
}): RateLimiter {
  const { redis, logger } = opts;
  const timeoutMs = opts.timeoutMs ?? 500;
  const retryRedisAfterMs = opts.retryRedisAfterMs ?? 1_000;
  const local = createMemoryBuckets();
  const decide = (key: BucketKey, d: { allowed: boolean; waitMs: number }): TakeResult => {
    if (d.allowed) return ALLOWED;
    recordRateLimitRejection({ reason: "rate", tenantId: key.tenantId });
    return { allowed: false, retryAfterSeconds: retryAfterSeconds(d.waitMs) };
  };

  if (!redis) {
    return { store: "memory", take: (key, limit) => decide(key, local.take(bucketKey(key), limit)) };
  }

  const leases = new Map<string, Lease>();
  /** The lease request under way per bucket: concurrent takes wait for it instead of each asking. */
  const asking = new Map<string, Promise<Awaited<ReturnType<typeof redisTake>> | undefined>>();

  const fallback = redisFallback({
    client: redis,
    logger,
    timeoutMs,
    retryAfterMs: retryRedisAfterMs,
    says: {
      back: "rate limiter: Redis answers again, limits are shared across replicas",
      down: "rate limiter: Redis unavailable, failing open to per-replica limits",
    },
  });
  const viaRedis = (client: Redis, key: string, limit: Limit, want: number) =>
    fallback.attempt(() => redisTake(client, key, limit, want));

  return {
    store: "redis",
    take(key, limit) {
      const k = bucketKey(key);
      // A live lease with a token left: decided here, no promise, no allocation.
      const lease = leases.get(k);
      const now = performance.now();
      if (lease && lease.tokens >= 1 && lease.until > now) {
        lease.tokens--;
        // Running low, or near its end, while in use: the next lease is asked for now, so no take
        // waits for it. Low: twice the size (within the cap); near its end: back to its size.
        const low = lease.tokens * 4 < lease.size;
        if ((low || lease.until - now < LEASE_MS / 4) && lease.size > 1 && !asking.has(k)) {
          const size = low ? Math.min(leaseCap(limit), lease.size * 2) : lease.size;
          void ask(k, limit, redis, Math.max(1, size - lease.tokens), size, false);
        }
        return ALLOWED;
      }
      return shared(key, k, limit, redis);
    },
  };

  /**
   * Asks Redis for up to `size` tokens. The answer becomes the bucket's lease, with what is left
   * of a live one, before any take waiting for it wakes (they await this very promise: woken
   * first, they would find the lease empty and each ask Redis alone). `own`: one granted token is
   * the asker's, not the lease's. `size`: the lease's size from then on (what it doubles from).
   */
  function ask(k: string, limit: Limit, r: Redis, want: number, size: number, own: boolean) {
    const now = performance.now();
    const asked = viaRedis(r, k, limit, want).then((answer) => {
      asking.delete(k);
      // A denied refill leaves the live lease as it is: its tokens keep their own expiry.
      if (answer && (own || answer.granted > 0)) {
        const held = leases.get(k);
        const left = held && held.until > performance.now() ? held.tokens : 0;
        const granted = Math.max(0, answer.granted - (own ? 1 : 0));
        leases.set(k, { tokens: left + granted, until: now + LEASE_MS, size });
        if (leases.size > 10_000) leases.delete(leases.keys().next().value as string);
      }
      return answer;
    });
    asking.set(k, asked);
    return asked;
  }

  /**
   * A take this process cannot decide alone. One lease request per bucket at a time: a take that
   * finds one under way waits for it and spends the new lease, or shares its denial (the bucket
   * was empty when it was asked); a take left over by a lease too small for every waiter waits
   * for the next request, which asks for twice as much. Only a take that finds none under way asks.
   */
  async function shared(key: BucketKey, k: string, limit: Limit, r: Redis): Promise<TakeResult> {
    for (;;) {
      const lease = leases.get(k);
      if (lease && lease.tokens >= 1 && lease.until > performance.now()) {
        lease.tokens--;
        return ALLOWED;
      }
      const under = asking.get(k);
      if (!under) break;
      const answer = await under;
      if (answer && !answer.allowed) return decide(key, answer);
    }
    const last = leases.get(k);
    const now = performance.now();
    const cap = leaseCap(limit);
    // Used up in time: ask for twice as much; expired with tokens left: ask for half.
    const size = !last
      ? 1
      : last.tokens < 1 && last.until > now
        ? Math.min(cap, last.size * 2)
        : Math.max(1, Math.min(cap, Math.floor(last.size / 2)));
    const asked = ask(k, limit, r, size, size, true);
    const answer = await asked;
    if (answer) return decide(key, answer);
    // Takes decided by the local fallback while Redis did not answer.
    recordRateLimitFallback();
    return decide(key, local.take(k, limit));
  }
}

/** The HTTP-facing error for a denial: 429 `{"error":"rate limit exceeded"}` with Retry-After. */
export function rateLimitedError(retryAfterSeconds: number): DomainError {
  return new DomainError("rate_limited", "rate limit exceeded", {
    headers: { "Retry-After": String(retryAfterSeconds) },
  });
}
