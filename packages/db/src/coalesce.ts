import { isStoreUnavailable } from "@gw/core";

type Pending<T> = { item: T; resolve: () => void; reject: (e: unknown) => void };

/**
 * Group commit for hot-path writes: with fewer than `maxInFlight` flushes running, an item is
 * written at once (no added latency when idle); otherwise it waits and goes out with everything
 * else that queued meanwhile, as one statement or one transaction, so one commit (one fsync) covers
 * many calls under load. A batch that fails is retried item by item, so one bad row fails alone;
 * not when the store is unreachable: that is no row's fault, and every item gets the error at once
 * (its caller's own retry, `withStoreRetry`, decides what happens next) instead of N more attempts
 * against a store that is down.
 *
 * `spacingMs` (writes nobody waits for): a flush starts no sooner than that after the previous one
 * started. An item that comes after a quiet spell still goes out at once; under load the batches
 * grow to what arrives in the spacing, so a row costs a fraction of a statement and of a wakeup of
 * the store.
 */
export function coalesce<T>(
  flush: (items: T[]) => Promise<void>,
  opts: { maxInFlight: number; maxBatch: number; spacingMs?: number | undefined },
): (item: T) => Promise<void> {
  const queue: Pending<T>[] = [];
  const spacingMs = opts.spacingMs ?? 0;
  let inFlight = 0;
  let lastStart = Number.NEGATIVE_INFINITY;
  let waiting = false;
  const run = async (batch: Pending<T>[]) => {
    try {
      await flush(batch.map((p) => p.item));
      for (const p of batch) p.resolve();
    } catch (e) {
      if (batch.length === 1 || isStoreUnavailable(e)) {
        for (const p of batch) p.reject(e);
        return;
      }
      await Promise.all(
        batch.map((p) =>
          flush([p.item]).then(
            () => p.resolve(),
            (err: unknown) => p.reject(err),
          ),
        ),
      );
    }
  };
  const kick = () => {
    while (inFlight < opts.maxInFlight && queue.length > 0) {
      if (spacingMs > 0) {
        const wait = lastStart + spacingMs - performance.now();
        // A full batch does not wait: the spacing is there to fill batches, not to slow them.
        if (wait > 0 && queue.length < opts.maxBatch) {
          if (!waiting) {
            waiting = true;
            setTimeout(() => {
              waiting = false;
              kick();
            }, wait);
          }
          return;
        }
        lastStart = performance.now();
      }
      const batch = queue.splice(0, opts.maxBatch);
      inFlight++;
      void run(batch).finally(() => {
        inFlight--;
        kick();
      });
    }
  };
  return (item) =>
    new Promise<void>((resolve, reject) => {
      queue.push({ item, resolve, reject });
      kick();
    });
}
