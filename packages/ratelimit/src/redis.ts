import { createHash } from "node:crypto";
import type { Redis } from "ioredis";
import type { BucketKey, Limit } from "./bucket.ts";

/**
 * The token bucket of bucket.ts in one Lua script, so refill and take are one atomic step however
 * many replicas call it. Time is the server's (TIME), so replica clocks do not matter.
 *
 * KEYS[1]: the bucket, a hash {t: tokens, at: microseconds of the last counted take}.
 * ARGV[1]: rps, ARGV[2]: burst. They come with every call, so a changed limit applies at once.
 * ARGV[3]: the most tokens to take (a lease, see limiter.ts); 1 when absent.
 * Returns {tokens granted (0 when denied), milliseconds until one token is available (0 when
 * granted)}.
 *
 * Numbers are written with string.format: Lua's default conversion keeps 14 digits, which would
 * round a microsecond timestamp. A denial writes nothing (refill is linear, so counting later gives
 * the same result). The key expires a second after it would be full again; a full bucket and a
 * missing one behave the same, so idle buckets cost no memory.
 */
export const TAKE_SCRIPT = `
if redis.replicate_commands then redis.replicate_commands() end
local rps = tonumber(ARGV[1])
local burst = tonumber(ARGV[2])
local want = tonumber(ARGV[3] or '1')
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000000 + tonumber(time[2])
local state = redis.call('HMGET', KEYS[1], 't', 'at')
local tokens = burst
if state[1] and state[2] then
  local elapsed = math.max(0, now - tonumber(state[2]))
  tokens = math.min(burst, tonumber(state[1]) + elapsed * rps / 1000000)
end
if tokens < 1 then
  return {0, math.ceil((1 - tokens) * 1000 / rps)}
end
local granted = math.min(want, math.floor(tokens))
tokens = tokens - granted
redis.call('HSET', KEYS[1], 't', string.format('%.17g', tokens), 'at', string.format('%.0f', now))
redis.call('PEXPIRE', KEYS[1], string.format('%.0f', math.ceil((burst - tokens) * 1000 / rps) + 1000))
return {granted, 0}
`;

const TAKE_SHA = createHash("sha1").update(TAKE_SCRIPT).digest("hex");

/**
 * The Redis key of a bucket. Both parts are URI-encoded so that no tenant id can collide with
 * another pair or smuggle in `{` `}`: the script touches one key, so no hash tag is needed, and
 * without one the buckets spread over every slot of a Redis Cluster.
 */
export function bucketKey(key: BucketKey): string {
  return `gw:rl:${encodeURIComponent(key.tenantId)}:${encodeURIComponent(key.agentId)}`;
}

/**
 * Takes up to `want` tokens in one round trip: EVALSHA, and EVAL only when the server has not
 * seen the script (first call, or after a restart or SCRIPT FLUSH), which also loads it.
 */
export async function redisTake(
  redis: Redis,
  key: string,
  limit: Limit,
  want = 1,
): Promise<{ allowed: boolean; granted: number; waitMs: number }> {
  const args = [String(limit.rps), String(limit.burst), String(want)];
  let reply: unknown;
  try {
    reply = await redis.evalsha(TAKE_SHA, 1, key, ...args);
  } catch (e) {
    if (!(e instanceof Error && e.message.startsWith("NOSCRIPT"))) throw e;
    reply = await redis.eval(TAKE_SCRIPT, 1, key, ...args);
  }
  if (!Array.isArray(reply) || typeof reply[0] !== "number" || typeof reply[1] !== "number") {
    throw new Error("unexpected rate-limit script reply");
  }
  return { allowed: reply[0] >= 1, granted: reply[0], waitMs: reply[1] };
}
