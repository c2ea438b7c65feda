import type { Redis } from "ioredis";
import { boundedQuotaKey, type QuotaCounter, quotaHashKey, windowStart } from "./quota.ts";
import type { Lease, LeaseBook } from "./quota-lease-book.ts";
import { evalCharge } from "./quota-script.ts";

/** The most counts a replica holds of one counter: 1 % of its limit, at most LEASE_MAX. */
export const leaseCap = (limit: number) => Math.max(1, Math.min(LEASE_MAX, Math.floor(limit / 100)));

/**
 * Charges the call from this replica's leases alone when every counter has a live one with a
 * count left (all or nothing: otherwise nothing is spent and false is returned, or the top-up
 * under way of a counter that ran dry, to wait for and try once more). A lease spent
 * down to a quarter of its size is topped up in the background (one request per counter at a time, never
 * above leaseCap held), so busy counters rarely run dry and calls seldom wait for Redis.
 */
export function fromLeases(
  redis: Redis,
  leases: LeaseBook,
  tenantId: string,
  version: number,
  counters: readonly QuotaCounter[],
): boolean | Promise<void> {
  const clock = performance.now();
  const now = Date.now();
  // The leases found go into the book's scratch array: nothing is allocated on a call the leases
  // serve (this runs to its end with no await, so no other call shares the array meanwhile).
  const held = leases.held;
  held.length = 0;
  for (const c of counters) {
    if (c.limit <= QUOTA_EXACT_MAX) return false;
    const l = leases.get(tenantId, version, c.rule, boundedQuotaKey(c.key));
    if (!l || l.until <= clock || l.window !== windowStart(c.windowMs, now)) return false;
    if (l.tokens < 1) return l.topUp ?? false;
    held.push(l);
  }
  let low: Array<[QuotaCounter, Lease]> | null = null;
  for (let i = 0; i < held.length; i++) {
    const l = held[i] as Lease;
    l.tokens--;
    // Low on counts, or half its time gone: topped up (and its time renewed) before it runs out.
    if (!l.asking && (l.tokens * 4 <= l.size || l.until - clock < LEASE_MS / 2)) {
      low ??= [];
      low.push([counters[i] as QuotaCounter, l]);
    }
  }
  held.length = 0;
  if (low !== null) topUp(redis, tenantId, version, low, clock);
  return true;
}

/**
 * Tops the given leases up in one script call, unawaited: one spent to a quarter to twice its size
 * (within leaseCap), any other back to its size (its time renewed, nothing more taken).
 */
export function topUp(
  redis: Redis,
  tenantId: string,
  version: number,
  low: Array<[QuotaCounter, Lease]>,
  clock: number,
): void {
  const keys: string[] = [];
  const args: string[] = [];
  const sizes: number[] = [];
  for (const [c, l] of low) {
    const size = l.tokens * 4 <= l.size ? Math.min(leaseCap(c.limit), l.size * 2) : l.size;
    sizes.push(size);
    l.asking = true;
    keys.push(quotaHashKey(tenantId, version, c.rule, l.window));
    const want = Math.max(0, size - l.tokens);
    args.push(
      boundedQuotaKey(c.key),
      String(c.limit),
      String(l.window + c.windowMs + 1000),
      String(want),
      "0",
    );
  }
  const done = evalCharge(redis, keys, args).then(
    (reply) => {
      // A counter without room refuses the whole top-up: nothing granted, the leases run dry.
      if (Array.isArray(reply) && reply[0] === 0) {
        low.forEach(([, l], j) => {
          l.tokens += Number(reply[j + 1]);
          l.until = clock + LEASE_MS;
          l.size = sizes[j] as number;
        });
      }
      for (const [, l] of low) {
        l.asking = false;
        l.topUp = null;
      }
    },
    () => {
      // Redis failed: the next charge that needs it finds out and falls back (viaRedis).
      for (const [, l] of low) {
        l.asking = false;
        l.topUp = null;
      }
    },
  );
  for (const [, l] of low) l.topUp = done;
}

/**
 * Counters with limits up to this are counted exactly: every call is one shared charge. Above it a
 * replica leases counts (at most 1 % of the limit, at most LEASE_MAX) and spends them for up to
 * LEASE_MS; unspent counts go back with its next charge of the counter in the same window.
 */
export const QUOTA_EXACT_MAX = 1_000;
export const LEASE_MS = 100;
// Each round trip of a busy counter serves up to three quarters of this many calls (one top-up).
export const LEASE_MAX = 256;
