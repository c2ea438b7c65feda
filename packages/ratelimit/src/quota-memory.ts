import {
  boundedQuotaKey,
  type QuotaCounter,
  type QuotaRule,
  type QuotaUse,
  type QuotaVerdict,
  quotaHashKey,
  secondsUntil,
  USAGE_MAX_PER_RULE,
  windowOf,
} from "./quota.ts";

type Entry = { expiresAt: number; fields: Map<string, number> };

/** Counters in this process: the embedded deployment, and the fallback while Redis does not answer. */
export function createMemoryQuotas(opts: { now?: () => number } = {}) {
  const now = opts.now ?? Date.now;
  const hashes = new Map<string, Entry>();
  let nextSweep = 0;
  const live = (k: string, t: number) => {
    const e = hashes.get(k);
    return e && e.expiresAt > t ? e : undefined;
  };
  return {
    charge(tenantId: string, version: number, counters: readonly QuotaCounter[]): QuotaVerdict {
      const t = now();
      if (t >= nextSweep) {
        for (const [k, e] of hashes) if (e.expiresAt <= t) hashes.delete(k);
        nextSweep = t + 10_000;
      }
      const at = counters.map((c) => {
        const w = windowOf(c.windowMs, t);
        return { hash: quotaHashKey(tenantId, version, c.rule, w.start), field: boundedQuotaKey(c.key), w };
      });
      for (let i = 0; i < counters.length; i++) {
        const a = at[i] as (typeof at)[number];
        if ((live(a.hash, t)?.fields.get(a.field) ?? 0) >= (counters[i] as QuotaCounter).limit) {
          return { allowed: false, index: i, retryAfterSeconds: secondsUntil(a.w.end, t) };
        }
      }
      for (const a of at) {
        let e = live(a.hash, t);
        if (!e) {
          e = { expiresAt: a.w.end + 1000, fields: new Map() };
          hashes.set(a.hash, e);
        }
        e.fields.set(a.field, (e.fields.get(a.field) ?? 0) + 1);
      }
      return { allowed: true };
    },
    usage(tenantId: string, version: number, rules: readonly QuotaRule[], key?: string): QuotaUse[] {
      const t = now();
      const out: QuotaUse[] = [];
      for (const r of rules) {
        const w = windowOf(r.windowMs, t);
        const e = live(quotaHashKey(tenantId, version, r.rule, w.start), t);
        const base = { rule: r.rule, limit: r.limit, windowStart: w.start, resetsAt: w.end };
        if (key !== undefined) {
          const k = boundedQuotaKey(key);
          out.push({ ...base, key: k, used: e?.fields.get(k) ?? 0 });
          continue;
        }
        let n = 0;
        for (const [k, used] of e?.fields ?? []) {
          if (n++ >= USAGE_MAX_PER_RULE) break;
          out.push({ ...base, key: k, used });
        }
      }
      return out;
    },
  };
}
