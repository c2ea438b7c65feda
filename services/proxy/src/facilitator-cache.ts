import { withinDeadline } from "@gw/core";
import { type FacilitatorRef, facilitatorOf } from "@gw/payments";
import type { Runtime } from "@gw/runtime";

/** Tenants remembered at most; past it the cache starts over (it is only a shortcut). */
const MAX_TENANTS = 10_000;

/**
 * Each tenant's facilitator (or none) for the payment step, read once per `ttlMs` instead of once
 * per paid call; a settlement write drops the tenant's entry (the change bus: at once in this
 * process, within a second elsewhere), like the agent cache. A failed read is not remembered.
 */
export function createFacilitatorCache(
  rt: Pick<Runtime, "store" | "changes">,
  ttlMs: number,
): (tenantId: string) => Promise<FacilitatorRef | null> {
  const entries = new Map<string, { value: Promise<FacilitatorRef | null>; until: number }>();
  rt.changes.subscribe((change) => {
    if (change.kind === "settlement") entries.delete(change.tenantId);
  });
  return (tenantId) => {
    const hit = entries.get(tenantId);
    if (hit && hit.until > Date.now()) return hit.value;
    // Bounded: a stalled store answers the caller 503 in time (docs/reliability.md).
    const value = withinDeadline(facilitatorOf(rt.store.db, tenantId));
    if (entries.size >= MAX_TENANTS) entries.clear();
    entries.set(tenantId, { value, until: Date.now() + ttlMs });
    value.catch(() => {
      if (entries.get(tenantId)?.value === value) entries.delete(tenantId);
    });
    return value;
  };
}
