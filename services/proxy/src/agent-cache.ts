import { type AgentRow, findAgent } from "@gw/agents";
import { isStoreUnavailable } from "@gw/core";
import type { Runtime } from "@gw/runtime";
import { type Target, targetOf } from "@gw/upstream";

export type CachedAgent = { row: AgentRow; target: Target | null };
export type AgentCache = (tenantId: string, agentId: string) => Promise<CachedAgent | undefined>;

const MAX_ENTRIES = 10_000;

/**
 * The proxy's view of the catalog: agent rows served from memory so the hot path does not pay a
 * query per call, with the upstream URL parsed once. A write to an agent drops its entry at once
 * in this process and, through the change bus, on every other replica; `ttlMs` only bounds how
 * long a lost notification can go unnoticed. Misses are not cached: a new agent is callable at once.
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
  return async (tenantId, agentId) => {
    const key = keyOf(tenantId, agentId);
    const now = Date.now();
    const hit = entries.get(key);
    if (hit && hit.until > now) return hit.value;
    let row: AgentRow | undefined;
    try {
      row = await findAgent(rt.store.db, tenantId, agentId);
    } catch (e) {
      // Store unreachable: a streaming call may go on with the agent last seen (its record is
      // held until the store is back); without one, the caller gets 503 store unavailable.
      if (hit && isStoreUnavailable(e)) return hit.value;
      throw e;
    }
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
      entries.set(key, { value, until: now + ttlMs });
    }
    return value;
  };
}
