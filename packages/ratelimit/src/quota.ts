import { createHash } from "node:crypto";
/** One counter a call charges: a policy `limit` rule (1-based position) for one key value. */
export type QuotaCounter = {
  readonly rule: string;
  readonly key: string;
  readonly limit: number;
  readonly windowMs: number;
};

/** All counters had room (each was charged one request), or the first spent one (none was charged). */
export type QuotaVerdict =
  | { readonly allowed: true }
  | { readonly allowed: false; readonly index: number; readonly retryAfterSeconds: number };

/** A counter's use in its current window (GET /v1/policy/quotas). Times in epoch milliseconds. */
export type QuotaUse = {
  readonly rule: string;
  readonly key: string;
  readonly used: number;
  readonly limit: number;
  readonly windowStart: number;
  readonly resetsAt: number;
};

/** A limit rule as the usage listing reads it. */
export type QuotaRule = { readonly rule: string; readonly limit: number; readonly windowMs: number };

export type Quotas = {
  /**
   * Charges one request to every counter, all or nothing: when one is spent, none is charged (a
   * refused call does not consume the others). Never throws.
   */
  charge: (tenantId: string, version: number, counters: readonly QuotaCounter[]) => Promise<QuotaVerdict>;
  /**
   * The leased charge alone, synchronous: true when every counter was charged from this replica's
   * leases (the call is allowed, as `charge` would have said); false when nothing was charged and
   * `charge` decides. Lets the hot path skip a promise when the leases have room. Absent on a
   * store that does not lease.
   */
  chargeLeased?: (tenantId: string, version: number, counters: readonly QuotaCounter[]) => boolean;
  /**
   * The counters of the tenant's policy version in their current windows: for `key`, one per rule;
   * without it, those with use, at most USAGE_MAX_PER_RULE per rule.
   */
  usage: (
    tenantId: string,
    version: number,
    rules: readonly QuotaRule[],
    key?: string,
  ) => Promise<QuotaUse[]>;
  readonly store: "redis" | "memory";
};

/** Key values longer than this are stored as their SHA-256, so a key's size is bounded. */
export const QUOTA_KEY_MAX = 128;
/** The most counters of one rule the usage listing returns without a key. */
export const USAGE_MAX_PER_RULE = 100;

/**
 * A key value as counted and listed: as it is up to QUOTA_KEY_MAX characters, else `sha256:<hex>`
 * of it (a 10 KB key value never makes a 10 KB Redis field; a listing shows the digest).
 */
export function boundedQuotaKey(value: string): string {
  if (value.length <= QUOTA_KEY_MAX && !value.startsWith("sha256:")) return value;
  return `sha256:${createHash("sha256").update(value).digest("hex")}`;
}

export const windowStart = (windowMs: number, now: number) => Math.floor(now / windowMs) * windowMs;

export const windowOf = (windowMs: number, now: number) => {
  const start = Math.floor(now / windowMs) * windowMs;
  return { start, end: start + windowMs };
};

/** Whole seconds until a window ends (at least 1): when its counter has room again. */
export const secondsUntil = (end: number, now: number) => Math.max(1, Math.ceil((end - now) / 1000));

/** The counters of one (tenant, policy version, rule, window): a hash from key value to count. */

export function quotaHashKey(tenantId: string, version: number, rule: string, windowStart: number): string {
  // The hash tag keeps one call's counters (one tenant) in one Redis Cluster slot for the script.
  return `gw:q:{${encodeURIComponent(tenantId)}}:${version}:${rule}:${windowStart}`;
}
