import { isStoreUnavailable, withinDeadline } from "@gw/core";

/** How long one store failure keeps the store "down" without a further sign either way. */
const DOWN_FOR_MS = 5_000;
/** An answer older than this does not tell `check` that the store is up: it asks. */
const FRESH_MS = 25;

export type StoreHealth = {
  /** A store call failed: remembered when the store was the cause. */
  failed: (e: unknown) => void;
  /** A store call answered: the store is up. */
  answered: () => void;
  /** A store call failed for want of the store lately and none has answered since. */
  down: () => boolean;
  /**
   * `down`, made sure of: when the store has not answered within the last few milliseconds, it
   * is asked (one `select 1` shared by every caller meanwhile, bounded by the store read
   * deadline). For refusals, never for the hot path.
   */
  check: () => Promise<boolean>;
};

/**
 * What this process last learned about the store from its own calls. Every raw query of the
 * store feeds it (`openStore`), so it learns of an outage from the first refused connection or
 * terminated query, not from the first admission that gives up waiting. The proxy's concurrency
 * step asks it before a refusal: while the store is down the in-flight slots fill with admissions
 * waiting on it, and a caller refused for want of a slot is told the truth, 503 `store
 * unavailable`, not 429 `too many concurrent calls` (docs/reliability.md). The check matters in
 * the first moments of an outage, when the slots are taken by calls that have not reached the
 * store yet and nothing has failed.
 */
export function createStoreHealth(probe?: () => Promise<unknown>, now: () => number = Date.now): StoreHealth {
  let downUntil = 0;
  let answeredAt = Number.NEGATIVE_INFINITY;
  let probing: Promise<void> | undefined;
  const health: StoreHealth = {
    failed: (e) => {
      if (isStoreUnavailable(e)) downUntil = now() + DOWN_FOR_MS;
    },
    answered: () => {
      downUntil = 0;
      answeredAt = now();
    },
    down: () => downUntil !== 0 && now() < downUntil,
    check: async () => {
      if (health.down()) return true;
      if (!probe || now() - answeredAt < FRESH_MS) return false;
      probing ??= withinDeadline(probe())
        .then(health.answered, health.failed)
        .finally(() => {
          probing = undefined;
        });
      await probing;
      return health.down();
    },
  };
  return health;
}

/** `query` that reports each answer and each failure to `health`. */
export function observed<A extends unknown[], R>(
  query: (...a: A) => Promise<R>,
  health: StoreHealth,
): (...a: A) => Promise<R> {
  return async (...a) => {
    try {
      const r = await query(...a);
      health.answered();
      return r;
    } catch (e) {
      health.failed(e);
      throw e;
    }
  };
}
