/** A replica's leased counts of one counter (a limit above QUOTA_EXACT_MAX) in one window. */
export type Lease = {
  window: number;
  tokens: number;
  until: number;
  size: number;
  asking: boolean;
  /** The background top-up under way, if any (settles, never rejects). */
  topUp: Promise<void> | null;
};

type ByKey = Map<string, Lease>;
type ByRule = Map<string, ByKey>;
type ByVersion = Map<number, ByRule>;

/** Where a lease is filed, so that the bound can take it out again. */
type Filed = { tenantId: string; version: number; rule: string; key: string };

/**
 * This replica's leases by (tenant, policy version, rule, bounded key value), at most `max` of
 * them (the oldest made goes first). Nested maps rather than one map of joined strings: a call
 * served from its leases looks each counter up with the strings it has already, building and
 * hashing no key of its own (the hot path of a leased quota).
 */
export class LeaseBook {
  readonly #tenants = new Map<string, ByVersion>();
  /** Every lease in the order made. */
  readonly #made = new Map<Lease, Filed>();
  readonly #max: number;
  /** Scratch for fromLeases, reused by every call (it never awaits while holding it). */
  readonly held: Lease[] = [];

  constructor(max = 10_000) {
    this.#max = max;
  }

  get size(): number {
    return this.#made.size;
  }

  get(tenantId: string, version: number, rule: string, key: string): Lease | undefined {
    return this.#tenants.get(tenantId)?.get(version)?.get(rule)?.get(key);
  }

  /** Files a new lease (replacing none: the caller looked first), dropping the oldest past the bound. */
  add(tenantId: string, version: number, rule: string, key: string, lease: Lease): void {
    const versions = inner(this.#tenants, tenantId);
    const keys = inner(inner(versions, version), rule);
    keys.set(key, lease);
    this.#made.set(lease, { tenantId, version, rule, key });
    if (this.#made.size > this.#max) this.#drop(this.#made.keys().next().value as Lease);
  }

  #drop(lease: Lease): void {
    const at = this.#made.get(lease);
    this.#made.delete(lease);
    if (at === undefined) return;
    const versions = this.#tenants.get(at.tenantId);
    const rules = versions?.get(at.version);
    const keys = rules?.get(at.rule);
    if (keys?.get(at.key) !== lease) return;
    keys.delete(at.key);
    // Empty maps go too: a bounded book stays bounded in tenants, versions and rules as well.
    if (keys.size > 0) return;
    rules?.delete(at.rule);
    if (rules?.size !== 0) return;
    versions?.delete(at.version);
    if (versions?.size === 0) this.#tenants.delete(at.tenantId);
  }
}

/** The map under `key`, made on first use. */
function inner<K, I, V>(outer: Map<K, Map<I, V>>, key: K): Map<I, V> {
  let m = outer.get(key);
  if (m === undefined) {
    m = new Map();
    outer.set(key, m);
  }
  return m;
}
