import { EventEmitter } from "node:events";

/**
 * A cancellation for one upstream call that undici takes as its `signal` (an EventEmitter that
 * emits `abort`), without an AbortController: creating one and its AbortSignal, and undici's
 * listener on it, were about 3 % of the proxy's CPU per streaming call (docs/performance.md).
 */
export class Cancel extends EventEmitter {
  aborted = false;
  /** The dispatched request in flight (`UpstreamAnswer`), told directly: no listener per call. */
  request: { cancelled(): void } | null = null;

  abort(): void {
    if (this.aborted) return;
    this.aborted = true;
    this.request?.cancelled();
    this.emit("abort");
  }
}

/** Resolves after `ms`, or at once when `cancel` fires. */
export function pause(ms: number, cancel: Cancel): Promise<void> {
  if (cancel.aborted) return Promise.resolve();
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      cancel.off("abort", done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    cancel.once("abort", done);
  });
}
