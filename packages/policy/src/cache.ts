import * as v from "valibot";
import { type CompiledPolicy, compilePolicy } from "./compile.ts";
import { PolicyDocument } from "./schema.ts";

/** The stored row; `document` null: deleted (no policy, as with no row). */
type Stored = { version: number; document: unknown };
type Entry = { expires: number; policy: CompiledPolicy | null };

const MAX_TENANTS = 10_000;

export type PolicyCache = {
  /** The tenant's compiled policy, or null when it has none (nothing is evaluated then). */
  get: (tenantId: string) => Promise<CompiledPolicy | null>;
  /**
   * The same without a promise, when the cache holds it fresh (null: the tenant has none);
   * undefined when it must be read (`get`).
   */
  peek: (tenantId: string) => CompiledPolicy | null | undefined;
  invalidate: (tenantId: string) => void;
  close: () => void;
};

/**
 * Per-tenant compiled policies. An entry lives `ttlMs`; on expiry the stored row is read again but
 * compiled again only when its version changed. Concurrent misses share one read. `subscribe`
 * hears policy writes (the runtime's change bus: this process at once, other replicas within
 * about a second), so a PUT is effective on the next call; the TTL bounds a lost notification.
 */
export function createPolicyCache(opts: {
  load: (tenantId: string) => Promise<Stored | undefined>;
  ttlMs: number;
  subscribe?: (invalidate: (tenantId: string) => void) => () => void;
}): PolicyCache {
  const entries = new Map<string, Entry>();
  const loading = new Map<string, Promise<CompiledPolicy | null>>();
  // Bumped by every invalidation: a read that started before a write must not store what it read.
  let epoch = 0;
  const listener = (tenantId: string) => {
    epoch++;
    entries.delete(tenantId);
    loading.delete(tenantId);
  };
  const unsubscribe = opts.subscribe?.(listener);

  const load = async (tenantId: string, previous: CompiledPolicy | null): Promise<CompiledPolicy | null> => {
    const started = epoch;
    const row = await opts.load(tenantId);
    let policy: CompiledPolicy | null = null;
    if (row && row.document !== null) {
      // Reuse the compiled form while the version is unchanged.
      policy =
        previous && previous.version === row.version
          ? previous
          : compilePolicy(v.parse(PolicyDocument, row.document), row.version);
    }
    if (started !== epoch) return policy;
    if (entries.size >= MAX_TENANTS) {
      const oldest = entries.keys().next().value;
      if (oldest !== undefined) entries.delete(oldest);
    }
    entries.set(tenantId, { expires: Date.now() + opts.ttlMs, policy });
    return policy;
  };

  const peek = (tenantId: string) => {
    const hit = entries.get(tenantId);
    return hit && hit.expires > Date.now() ? hit.policy : undefined;
  };

  return {
    peek,
    get: (tenantId) => {
      const fresh = peek(tenantId);
      if (fresh !== undefined) return Promise.resolve(fresh);
      const hit = entries.get(tenantId);
      let pending = loading.get(tenantId);
      if (!pending) {
        const p = load(tenantId, hit?.policy ?? null).finally(() => {
          if (loading.get(tenantId) === p) loading.delete(tenantId);
        });
        pending = p;
        loading.set(tenantId, p);
      }
      return pending;
    },
    invalidate: listener,
    close: () => {
      unsubscribe?.();
    },
  };
}
