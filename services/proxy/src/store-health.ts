import { isStoreUnavailable } from "@gw/core";

/** How long one store failure keeps the store "down" without a further sign either way. */
const DOWN_FOR_MS = 5_000;

export type StoreHealth = {
  /** An admission failed: remembers it when the store was the cause. */
  failed: (e: unknown) => void;
  /** A durable write committed: the store answers again. */
  answered: () => void;
  /** The store failed an admission lately and nothing has committed since. */
  down: () => boolean;
};

/**
 * What this replica last learned about the store from its own admissions. The concurrency step
 * reads it: while the store is down, admissions wait on it (up to the store deadline) and fill the
 * in-flight slots, so a caller refused for want of a slot is told the truth, 503 `store
 * unavailable`, not 429 `too many concurrent calls` (issue 24; docs/reliability.md).
 */
export function createStoreHealth(now: () => number = Date.now): StoreHealth {
  let downUntil = 0;
  return {
    failed: (e) => {
      if (isStoreUnavailable(e)) downUntil = now() + DOWN_FOR_MS;
    },
    answered: () => {
      downUntil = 0;
    },
    down: () => now() < downUntil,
  };
}
