import { DomainError, unavailable } from "@gw/core";
import { type Logger, recordRateLimitFallback, recordRateLimitRejection } from "@gw/telemetry";
import type { Redis } from "ioredis";
import {
  boundedQuotaKey,
  type QuotaCounter,
  type QuotaRule,
  type Quotas,
  type QuotaUse,
  type QuotaVerdict,
  quotaHashKey,
  secondsUntil,
  USAGE_MAX_PER_RULE,
  windowOf,
} from "./quota.ts";
import { fromLeases, LEASE_MS, leaseCap, QUOTA_EXACT_MAX } from "./quota-lease.ts";
import { type Lease, LeaseBook } from "./quota-lease-book.ts";
import { createMemoryQuotas } from "./quota-memory.ts";
import { evalCharge } from "./quota-script.ts";
import { askRedis, redisFallback } from "./redis-fallback.ts";

/**
 * The quota counters of policy `limit` rules (docs/policy.md "Quotas"): fixed UTC windows, one
 * count for the deployment. With `redis` every replica counts in the same Redis hashes through one
 * atomic script per call (leased above QUOTA_EXACT_MAX); without it they live in this process.
 *
 * Redis outage: like the per-agent limiter (limiter.ts), fail open to counting in this replica
 * (docs/policy.md says why): a charge waits for Redis at most `timeoutMs`; after a failure Redis
 * is skipped and probed again by one charge at most every `retryRedisAfterMs`.
 */
export function createQuotas(opts: {
  redis?: Redis | undefined;
  logger: Logger;
  timeoutMs?: number;
  retryRedisAfterMs?: number;
}): Quotas {
  const { redis, logger } = opts;
  const timeoutMs = opts.timeoutMs ?? 500;
  const retryRedisAfterMs = opts.retryRedisAfterMs ?? 1_000;
  const local = createMemoryQuotas();
  const refused = (tenantId: string, v: QuotaVerdict) => {
    if (!v.allowed) recordRateLimitRejection({ reason: "quota", tenantId });
    return v;
  };
  if (!redis) {
    return {
      store: "memory",
      charge: async (tenantId, version, counters) =>
        refused(tenantId, local.charge(tenantId, version, counters)),
      usage: async (tenantId, version, rules, key) => local.usage(tenantId, version, rules, key),
    };
  }
  const client = redis;
  const leases = new LeaseBook();

  const fallback = redisFallback({
    client,
    logger,
    timeoutMs,
    retryAfterMs: retryRedisAfterMs,
    says: {
      back: "quotas: Redis answers again, counts are shared across replicas",
      down: "quotas: Redis unavailable, counting in each replica",
    },
  });

  return {
    store: "redis",
    // While Redis is failing, charges count locally as documented: never from the leases then.
    chargeLeased: (tenantId, version, counters) =>
      !fallback.failing && fromLeases(client, leases, tenantId, version, counters) === true,
    async charge(tenantId, version, counters) {
      // Every counter charged from this replica's leases: no Redis, no timer (the common case
      // above QUOTA_EXACT_MAX). While Redis is failing, charges count locally as documented.
      if (!fallback.failing && fromLeases(client, leases, tenantId, version, counters) === true)
        return ALLOWED;
      const shared = await fallback.attempt(() => redisCharge(client, leases, tenantId, version, counters));
      if (shared) return refused(tenantId, shared);
      recordRateLimitFallback();
      return refused(tenantId, local.charge(tenantId, version, counters));
    },
    async usage(tenantId, version, rules, key) {
      try {
        return await askRedis(client, () => redisUsage(client, tenantId, version, rules, key), timeoutMs);
      } catch (e) {
        if (e instanceof DomainError) throw e;
        throw unavailable("quota counts unavailable");
      }
    },
  };
}

const ALLOWED: QuotaVerdict = { allowed: true };

/** What one call asks of Redis for one counter. */
type Ask = {
  index: number;
  hash: string;
  field: string;
  end: number;
  want: number;
  back: number;
  /** The lease this charge renews; null for an exact charge of one. */
  lease: Lease | null;
};

async function redisCharge(
  redis: Redis,
  leases: LeaseBook,
  tenantId: string,
  version: number,
  counters: readonly QuotaCounter[],
): Promise<QuotaVerdict> {
  // A counter ran dry while its top-up is on the way: wait for that (within this charge's
  // timeout) rather than ask Redis for this call alone.
  const pending = fromLeases(redis, leases, tenantId, version, counters);
  if (pending === true) return ALLOWED;
  if (pending !== false) {
    await pending;
    if (fromLeases(redis, leases, tenantId, version, counters) === true) return ALLOWED;
  }
  const now = Date.now();
  const clock = performance.now();
  const asks: Ask[] = [];
  const spent: Lease[] = [];
  const returned: Array<[Lease, number]> = [];
  const asking: Lease[] = [];
  // A call that is not admitted keeps this replica's leases as they were.
  const restore = () => {
    for (const l of spent) l.tokens++;
    for (const [l, n] of returned) l.tokens += n;
  };
  for (let i = 0; i < counters.length; i++) {
    const c = counters[i] as QuotaCounter;
    const w = windowOf(c.windowMs, now);
    const hash = quotaHashKey(tenantId, version, c.rule, w.start);
    const field = boundedQuotaKey(c.key);
    if (c.limit <= QUOTA_EXACT_MAX) {
      asks.push({ index: i, hash, field, end: w.end, want: 1, back: 0, lease: null });
      continue;
    }
    let l = leases.get(tenantId, version, c.rule, field);
    // A lease of an earlier window is void: its counts expire with that window.
    if (l !== undefined && l.window !== w.start) l = undefined;
    if (l && l.tokens >= 1 && l.until > clock) {
      // Reserved now, given back below if another counter refuses the call.
      l.tokens--;
      spent.push(l);
      continue;
    }
    if (l?.asking) {
      // One lease request per counter at a time: meanwhile calls are charged one by one, so a
      // replica never holds more than one lease's counts.
      asks.push({ index: i, hash, field, end: w.end, want: 1, back: 0, lease: null });
      continue;
    }
    const cap = leaseCap(c.limit);
    // Used up in time: twice as much; expired with counts left: half; a first lease: 1.
    const size = !l ? 1 : l.tokens < 1 ? l.size * 2 : Math.floor(l.size / 2);
    if (!l) {
      l = { window: w.start, tokens: 0, until: 0, size: 1, asking: false, topUp: null };
      leases.add(tenantId, version, c.rule, field, l);
    }
    const back = l.tokens;
    if (back > 0) {
      returned.push([l, back]);
      l.tokens = 0;
    }
    l.asking = true;
    asking.push(l);
    asks.push({ index: i, hash, field, end: w.end, want: Math.max(1, Math.min(size, cap)), back, lease: l });
  }
  if (asks.length === 0) return { allowed: true };
  const keys = asks.map((a) => a.hash);
  const args: string[] = [];
  for (const a of asks) {
    const limit = (counters[a.index] as QuotaCounter).limit;
    args.push(a.field, String(limit), String(a.end + 1000), String(a.want), String(a.back));
  }
  let reply: unknown;
  try {
    reply = await evalCharge(redis, keys, args);
  } catch (e) {
    restore();
    throw e;
  } finally {
    for (const l of asking) l.asking = false;
  }
  if (!Array.isArray(reply) || typeof reply[0] !== "number") throw new Error("unexpected quota script reply");
  if (reply[0] !== 0) {
    restore();
    const a = asks[reply[0] - 1] as Ask;
    return { allowed: false, index: a.index, retryAfterSeconds: secondsUntil(a.end, Date.now()) };
  }
  asks.forEach((a, j) => {
    if (a.lease === null) return;
    a.lease.tokens += Number(reply[j + 1]) - 1;
    a.lease.until = clock + LEASE_MS;
    a.lease.size = a.want;
  });
  return { allowed: true };
}

async function redisUsage(
  redis: Redis,
  tenantId: string,
  version: number,
  rules: readonly QuotaRule[],
  key: string | undefined,
): Promise<QuotaUse[]> {
  const now = Date.now();
  const out: QuotaUse[] = [];
  for (const r of rules) {
    const w = windowOf(r.windowMs, now);
    const hash = quotaHashKey(tenantId, version, r.rule, w.start);
    const base = { rule: r.rule, limit: r.limit, windowStart: w.start, resetsAt: w.end };
    if (key !== undefined) {
      const k = boundedQuotaKey(key);
      out.push({ ...base, key: k, used: Number((await redis.hget(hash, k)) ?? 0) });
      continue;
    }
    const [, flat] = await redis.hscan(hash, "0", "COUNT", USAGE_MAX_PER_RULE);
    for (let i = 0; i + 1 < flat.length && i / 2 < USAGE_MAX_PER_RULE; i += 2) {
      out.push({ ...base, key: flat[i] as string, used: Number(flat[i + 1]) });
    }
  }
  return out;
}
