import { type AgentRow, findAgent } from "@gw/agents";
import { withinDeadline } from "@gw/core";
import type { Runtime } from "@gw/runtime";
import { type Target, targetOf } from "@gw/upstream";

export type CachedAgent = { row: AgentRow; target: Target | null };
export type AgentCache = ((tenantId: string, agentId: string) => Promise<CachedAgent | undefined>) & {
  /** The same, answered without a promise when the entry is held (a hit is most calls' step 2). */
  now: (tenantId: string, agentId: string) => CachedAgent | undefined | Promise<CachedAgent | undefined>;
};

const MAX_ENTRIES = 10_000;

/**
 * The proxy's view of the catalog: agent rows served from memory so the hot path does not pay a
 * query per call, with the upstream URL parsed once. A write to an agent drops its entry at once
 * in this process and, through the change bus, on every other replica; `ttlMs` only bounds how
 * long a lost notification can go unnoticed. Misses are not cached: a new agent is callable at once.
 * A lookup waits for the store at most STORE_READ_DEADLINE_MS (then 503).
 */
export function createAgentCache(rt: Pick<Runtime, "store" | "changes">, ttlMs: number): AgentCache {
  const entries = new Map<string, { value: CachedAgent; until: number }>();
  const keyOf = (tenantId: string, agentId: string) => `${tenantId}\u0000${agentId}`;
  rt.changes.subscribe((change) => {
    if (change.kind !== "agent") return;
    if (change.id !== undefined) {
      entries.delete(keyOf(change.tenantId, change.id));
      return;
    }
    for (const key of entries.keys()) if (key.startsWith(`${change.tenantId}\u0000`)) entries.delete(key);
  });
  const load = async (key: string, tenantId: string, agentId: string): Promise<CachedAgent | undefined> => {
    const row = await withinDeadline(findAgent(rt.store.db, tenantId, agentId));
    if (!row) {
      entries.delete(key);
      return undefined;
    }
    const value = { row, target: row.upstreamUrl ? targetOf(row.upstreamUrl) : null };
    if (ttlMs > 0) {
      if (entries.size >= MAX_ENTRIES) {
        const oldest = entries.keys().next().value;
        if (oldest !== undefined) entries.delete(oldest);
      }
      entries.delete(key);
      entries.set(key, { value, until: Date.now() + ttlMs });
    }
    return value;
  };
  const refreshing = new Set<string>();
  const now = (tenantId: string, agentId: string) => {
    const key = keyOf(tenantId, agentId);
    const hit = entries.get(key);
    if (hit && hit.until > Date.now()) return hit.value;
    if (hit) {
      // Expired: served as last seen while one refresh runs beside the call (writes drop the entry
      // at once through the change bus; the TTL only bounds a lost notification), so no call waits
      // on the store for an agent it knows, and an outage does not hold the caller.
      if (!refreshing.has(key)) {
        refreshing.add(key);
        load(key, tenantId, agentId)
          .catch(() => {}) // kept as last seen; the next call after the TTL tries again
          .finally(() => refreshing.delete(key));
      }
      return hit.value;
    }
    return load(key, tenantId, agentId);
  };
  return Object.assign(
    (tenantId: string, agentId: string) => {
      const found = now(tenantId, agentId);
      return found instanceof Promise ? found : Promise.resolve(found);
    },
    { now },
  );
}
