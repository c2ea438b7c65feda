export type { BucketKey, Limit, TakeResult } from "./bucket.ts";
export { retryAfterSeconds } from "./bucket.ts";
export { createInFlight, type InFlight, type Release, tooManyConcurrentError } from "./concurrency.ts";
export { createRateLimiter, type RateLimiter, rateLimitedError } from "./limiter.ts";
export { createMemoryBuckets, type MemoryBuckets } from "./memory.ts";
export { bucketKey } from "./redis.ts";
