import { createHash } from "node:crypto";
import type { Redis } from "ioredis";

/**
 * Check-then-charge over all of one call's counters in one atomic step. KEYS: the counters'
 * hashes. ARGV per counter: field (key value), limit, expiry (epoch ms: the window's end, plus a
 * second), the counts wanted (1, or a lease: see QUOTA_EXACT_MAX) and the counts given back (the
 * unspent rest of this replica's earlier lease in the same window, 0 when none). Every counter
 * needs room for one call; then each is charged min(wanted, room). Returns {0, granted...} when
 * every counter was charged, else {the 1-based index of the first spent one} (nothing written).
 */
export const CHARGE_SCRIPT = `
local n = #KEYS
local used = {}
for i = 1, n do
  local a = 5 * i - 4
  used[i] = tonumber(redis.call('HGET', KEYS[i], ARGV[a]) or '0') - tonumber(ARGV[a + 4])
  if used[i] >= tonumber(ARGV[a + 1]) then return {i} end
end
local granted = {0}
for i = 1, n do
  local a = 5 * i - 4
  local g = math.min(tonumber(ARGV[a + 3]), tonumber(ARGV[a + 1]) - used[i])
  granted[i + 1] = g
  redis.call('HINCRBY', KEYS[i], ARGV[a], g - tonumber(ARGV[a + 4]))
  redis.call('PEXPIREAT', KEYS[i], ARGV[a + 2])
end
return granted
`;
const CHARGE_SHA = createHash("sha1").update(CHARGE_SCRIPT).digest("hex");

/** Runs the charge script (loaded on first use of each Redis). */
export async function evalCharge(redis: Redis, keys: string[], args: string[]): Promise<unknown> {
  try {
    return await redis.evalsha(CHARGE_SHA, keys.length, ...keys, ...args);
  } catch (e) {
    if (!(e instanceof Error && e.message.startsWith("NOSCRIPT"))) throw e;
    return await redis.eval(CHARGE_SCRIPT, keys.length, ...keys, ...args);
  }
}
