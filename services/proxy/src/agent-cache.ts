import { isId } from "@gw/core";
import { type AgentRow, agentRepo, type Db } from "@gw/db";
import { type Target, targetOf } from "@gw/upstream";

export type CachedAgent = { row: AgentRow; target: Target | null };

const MAX_ENTRIES = 10_000;

/**
 * The proxy's view of the catalog: agent rows served from memory for `ttlMs` so the hot path
 * does not pay a query per call, with the upstream URL parsed once. A PATCH shows up within
 * `ttlMs` on every replica. Misses are not cached: an agent created a moment ago is callable.
 */
export function createAgentCache(db: Db, ttlMs: number) {
  const entries = new Map<string, { value: CachedAgent; until: number }>();
  return async (tenantId: string, agentId: string): Promise<CachedAgent | undefined> => {
    if (!isId("agt", agentId)) return undefined;
    const key = `${tenantId}\u0000${agentId}`;
    const now = Date.now();
    const hit = entries.get(key);
    if (hit && hit.until > now) return hit.value;
    const row = await agentRepo.get(db, tenantId, agentId);
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
