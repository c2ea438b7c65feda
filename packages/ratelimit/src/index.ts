export type { BucketKey, Limit, TakeResult } from "./bucket.ts";
export { retryAfterSeconds } from "./bucket.ts";
export { createInFlight, type InFlight, type Release, tooManyConcurrentError } from "./concurrency.ts";
export { createRateLimiter, type RateLimiter, rateLimitedError } from "./limiter.ts";
export { createMemoryBuckets, type MemoryBuckets } from "./memory.ts";
export {
  boundedQuotaKey,
  QUOTA_KEY_MAX,
  type QuotaCounter,
  type QuotaRule,
  type Quotas,
  type QuotaUse,
  type QuotaVerdict,
  USAGE_MAX_PER_RULE,
} from "./quota.ts";
export { createMemoryQuotas } from "./quota-memory.ts";
export { createQuotas } from "./quota-redis.ts";
export { bucketKey } from "./redis.ts";
