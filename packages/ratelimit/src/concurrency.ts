import { DomainError } from "@gw/core";
import { recordRateLimitRejection } from "@gw/telemetry";

/** Gives the slot back; calling it again does nothing. */
export type Release = () => void;

export type InFlight = {
  /**
   * Takes one slot for the agent and one for its tenant, or none: a call over either bound gets
   * `undefined` (→ 429 `too many concurrent calls`).
   */
  acquire: (
    key: { tenantId: string; agentId: string },
    limits: { agent: number; tenant: number },
  ) => Release | undefined;
  /** Calls in flight now for a tenant (tests, metrics). */
  tenant: (tenantId: string) => number;
};

/**
 * In-flight limits per agent and per tenant, in this process (docs/rate-limit.md, "Rate limit and
 * fairness": per proxy replica). Counters only: no timers, an entry is dropped when it reaches 0.
 */
export function createInFlight(): InFlight {
  const agents = new Map<string, number>();
  const tenants = new Map<string, number>();
  const add = (m: Map<string, number>, k: string, d: number) => {
    const n = (m.get(k) ?? 0) + d;
    if (n <= 0) m.delete(k);
    else m.set(k, n);
  };
  return {
    acquire({ tenantId, agentId }, limits) {
      // Agent ids are unique across tenants, but keep the tenant in the key all the same.
      const a = `${tenantId}\u0000${agentId}`;
      if ((agents.get(a) ?? 0) >= limits.agent || (tenants.get(tenantId) ?? 0) >= limits.tenant)
        return undefined;
      add(agents, a, 1);
      add(tenants, tenantId, 1);
      let released = false;
      return () => {
        if (released) return;
        released = true;
        add(agents, a, -1);
        add(tenants, tenantId, -1);
      };
    },
    tenant: (tenantId) => tenants.get(tenantId) ?? 0,
  };
}

/** 429 `too many concurrent calls` with `Retry-After: 1`, counted as a concurrency rejection. */
export function tooManyConcurrentError(tenantId: string): DomainError {
  recordRateLimitRejection({ reason: "concurrency", tenantId });
  return new DomainError("rate_limited", "too many concurrent calls", { headers: { "Retry-After": "1" } });
}
