import { LIMITS } from "@gw/core";

/** A bucket's parameters: refill rate in tokens per second and capacity in whole tokens. */
export type Limit = { rps: number; burst: number };

export type BucketKey = { tenantId: string; agentId: string };

export type TakeResult = { allowed: true } | { allowed: false; retryAfterSeconds: number };

/** Tokens left and when they were counted (milliseconds on the store's clock). */
export type BucketState = { tokens: number; at: number };

/**
 * One take from a token bucket, as a pure function. The Redis script (redis.ts) is the same maths
 * in Lua; keep the two in step.
 *
 * - A bucket never seen starts full (`burst` tokens).
 * - Tokens refill at `rps` for the time since the last counted take, up to `burst`. The limit is
 *   read on every call, so a changed rate applies to the time since the last take, and a smaller
 *   burst clamps a fuller bucket at once; a larger burst grants nothing until tokens refill.
 * - A denial does not change the state: with linear refill, counting later gives the same answer.
 */
export function takeToken(
  state: BucketState | undefined,
  limit: Limit,
  now: number,
): { state: BucketState; allowed: boolean; waitMs: number } {
  const elapsed = state ? Math.max(0, now - state.at) : 0;
  const tokens = state ? Math.min(limit.burst, state.tokens + (elapsed * limit.rps) / 1000) : limit.burst;
  if (tokens >= 1) return { state: { tokens: tokens - 1, at: now }, allowed: true, waitMs: 0 };
  return { state: state ?? { tokens, at: now }, allowed: false, waitMs: ((1 - tokens) * 1000) / limit.rps };
}

/** Milliseconds until a bucket left with `tokens` is full again; after that it equals a new bucket. */
export function msUntilFull(tokens: number, limit: Limit): number {
  return (Math.max(0, limit.burst - tokens) * 1000) / limit.rps;
}

/** Retry-After in whole seconds: the wait for one token rounded up, clamped to 1..60. */
export function retryAfterSeconds(waitMs: number): number {
  const seconds = Math.ceil(waitMs / 1000);
  if (Number.isNaN(seconds)) return LIMITS.retryAfterMaxSeconds;
  return Math.min(LIMITS.retryAfterMaxSeconds, Math.max(1, seconds));
}
