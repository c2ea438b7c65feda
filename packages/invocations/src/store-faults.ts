import { isStoreUnavailable, StoreDeadline } from "@gw/core";

/**
 * Waits for `write` at most `ms`; past that throws `StoreDeadline` (mapped to 503 `store
 * unavailable`). The write is not cancelled: `late` runs once it settled, whatever its outcome (a
 * failure after the deadline may still have committed: its answer was lost), so whoever answered
 * the caller can undo what the caller was told did not happen.
 */
export async function withDeadline(write: Promise<void>, ms: number, late: () => void): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  let timedOut = false;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      timedOut = true;
      reject(new StoreDeadline());
    }, ms);
  });
  const settled = () => {
    if (timedOut) late();
  };
  write.then(settled, settled);
  try {
    await Promise.race([write, deadline]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Runs `write` again while it fails because the store is unreachable (back-off from 100 ms to
 * `maxWaitMs`, 5 s unless told), for at most `ms`; any other error, or the last one, is thrown.
 * For records: an outage delays them, it does not leave rows open.
 */
export function withStoreRetry<T>(write: () => Promise<T>, ms: number, maxWaitMs = 5_000): Promise<T> {
  const until = Date.now() + ms;
  // Chained, not an async loop: a write that succeeds (every record of a healthy store) costs one
  // promise here, not an async frame per attempt.
  const again = (e: unknown, wait: number): Promise<T> => {
    if (!isStoreUnavailable(e) || Date.now() + wait > until) return Promise.reject(e);
    return new Promise((r) => setTimeout(r, wait))
      .then(write)
      .catch((next: unknown) => again(next, Math.min(wait * 2, maxWaitMs)));
  };
  return write().catch((e: unknown) => again(e, 100));
}
