import type { Logger } from "@gw/telemetry";
import type { Redis } from "ioredis";

/** Connection states in which ioredis would only queue the command; skip the wait. */
const DOWN = new Set(["reconnecting", "close", "end"]);

/**
 * `ask` of a Redis client that must answer within `ms`: rejects at once when the connection is
 * down (ioredis would only queue the command) and after `ms` when Redis does not answer.
 */
export function askRedis<T>(client: Redis, ask: () => Promise<T>, ms: number): Promise<T> {
  if (DOWN.has(client.status)) return Promise.reject(new Error(`redis connection is ${client.status}`));
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`redis did not answer within ${ms} ms`)), ms);
  });
  return Promise.race([ask(), timeout]).finally(() => clearTimeout(timer));
}

export type RedisFallback = {
  /** Whether Redis failed last time it was asked: callers count in this process meanwhile. */
  readonly failing: boolean;
  /**
   * `ask`'s answer, or undefined when Redis failed or is being skipped: after a failure Redis is
   * skipped and probed again by one call at most every `retryAfterMs`, so a dead or hung Redis
   * adds no latency to the hot path. Entering and leaving the fallback is logged once each.
   */
  attempt<T>(ask: () => Promise<T>): Promise<T | undefined>;
};

/** The fail-open rule the rate limiter and the quotas share (docs/rate-limit.md, docs/policy.md). */
export function redisFallback(o: {
  client: Redis;
  logger: Logger;
  timeoutMs: number;
  retryAfterMs: number;
  /** The log lines on leaving and entering the fallback. */
  says: { back: string; down: string };
}): RedisFallback {
  let failing = false;
  let probing = false;
  let retryAt = 0;
  return {
    get failing() {
      return failing;
    },
    async attempt(ask) {
      if (failing && (probing || performance.now() < retryAt)) return undefined;
      // While failing, exactly one call at a time probes Redis; the others stay local.
      const probe = failing;
      if (probe) probing = true;
      try {
        const v = await askRedis(o.client, ask, o.timeoutMs);
        if (failing) o.logger.warn(o.says.back);
        failing = false;
        return v;
      } catch (e) {
        retryAt = performance.now() + o.retryAfterMs;
        if (!failing) {
          o.logger.error(
            {
              err: {
                name: e instanceof Error ? e.name : "unknown",
                message: e instanceof Error ? e.message : "",
              },
            },
            o.says.down,
          );
        }
        failing = true;
        return undefined;
      } finally {
        if (probe) probing = false;
      }
    },
  };
}
