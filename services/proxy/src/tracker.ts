/** Tracks background promises so graceful shutdown can wait for them. */
export type Tracker = {
  track: (p: Promise<unknown>) => void;
  drain: () => Promise<void>;
  size: () => number;
};

/**
 * A count of the promises not yet settled, and who waits for it to reach zero: every streaming
 * call's record is tracked, so a track costs one reaction with shared handlers, not a set entry
 * and the closures of a `catch` and a `finally` per call.
 */
export function createTracker(): Tracker {
  let open = 0;
  let idle: Array<() => void> = [];
  const settled = () => {
    if (--open > 0) return;
    const waiting = idle;
    idle = [];
    for (const wake of waiting) wake();
  };
  return {
    track(p) {
      open++;
      p.then(settled, settled);
    },
    async drain() {
      // Checked again on waking: a record tracked meanwhile is waited for too.
      while (open > 0) await new Promise<void>((resolve) => idle.push(resolve));
    },
    size: () => open,
  };
}
