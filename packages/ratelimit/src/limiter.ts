import { DomainError } from "@gw/core";
import { type Logger, recordRateLimitFallback, recordRateLimitRejection } from "@gw/telemetry";
import type { Redis } from "ioredis";
import { type BucketKey, type Limit, retryAfterSeconds, type TakeResult } from "./bucket.ts";
import { createMemoryBuckets } from "./memory.ts";
import { bucketKey, redisTake } from "./redis.ts";

export type RateLimiter = {
  /** Takes one token from the (tenant, agent) bucket with the given parameters. Never throws. */
  take: (key: BucketKey, limit: Limit) => Promise<TakeResult>;
  /** Where buckets live: shared in Redis, or in this process only. */
  readonly store: "redis" | "memory";
};

/** Connection states in which ioredis would only queue the command; skip the wait. */
const DOWN = new Set(["reconnecting", "close", "end"]);

/**
 * The per-(tenant, agent) token bucket of DESIGN.md §3 "Rate limit". With `redis` the buckets are
 * shared by every replica through one atomic script; without it they live in this process.
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
    if (d.allowed) return { allowed: true };
    recordRateLimitRejection({ reason: "rate", tenantId: key.tenantId });
    return { allowed: false, retryAfterSeconds: retryAfterSeconds(d.waitMs) };
  };

  if (!redis) {
    return { store: "memory", take: async (key, limit) => decide(key, local.take(bucketKey(key), limit)) };
  }

  let failing = false;
  let probing = false;
  let retryAt = 0;

  async function viaRedis(client: Redis, key: string, limit: Limit) {
    if (failing && (probing || performance.now() < retryAt)) return undefined;
    // While failing, exactly one take at a time probes Redis; the others stay local.
    const probe = failing;
    if (probe) probing = true;
    try {
      if (DOWN.has(client.status)) throw new Error(`redis connection is ${client.status}`);
      const d = await withTimeout(redisTake(client, key, limit), timeoutMs);
      if (failing) logger.warn("rate limiter: Redis answers again, limits are shared across replicas");
      failing = false;
      return d;
    } catch (e) {
      retryAt = performance.now() + retryRedisAfterMs;
      if (!failing) {
        logger.error(
          {
            err: {
              name: e instanceof Error ? e.name : "unknown",
              message: e instanceof Error ? e.message : "",
            },
          },
          "rate limiter: Redis unavailable, failing open to per-replica limits",
        );
      }
      failing = true;
      return undefined;
    } finally {
      if (probe) probing = false;
    }
  }

  return {
    store: "redis",
    async take(key, limit) {
      const k = bucketKey(key);
      const shared = await viaRedis(redis, k, limit);
      if (shared) return decide(key, shared);
      // Takes decided by the local fallback while Redis did not answer.
      recordRateLimitFallback();
      return decide(key, local.take(k, limit));
    },
  };
}

function withTimeout<T>(p: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`redis did not answer within ${ms} ms`)), ms);
  });
  return Promise.race([p, timeout]).finally(() => clearTimeout(timer));
}

/** The HTTP-facing error for a denial: 429 `{"error":"rate limit exceeded"}` with Retry-After. */
export function rateLimitedError(retryAfterSeconds: number): DomainError {
  return new DomainError("rate_limited", "rate limit exceeded", {
    headers: { "Retry-After": String(retryAfterSeconds) },
  });
}
