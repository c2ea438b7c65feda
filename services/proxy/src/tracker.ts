/** Tracks background promises so graceful shutdown can wait for them. */
export type Tracker = {
  track: (p: Promise<unknown>) => void;
  drain: () => Promise<void>;
  size: () => number;
};

export function createTracker(): Tracker {
  const pending = new Set<Promise<unknown>>();
  return {
    track(p) {
      const settled = p.catch(() => {}).finally(() => pending.delete(settled));
      pending.add(settled);
    },
    async drain() {
      while (pending.size > 0) await Promise.all([...pending]);
    },
    size: () => pending.size,
  };
}
