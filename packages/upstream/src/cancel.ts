import { EventEmitter } from "node:events";

/**
 * A cancellation for one upstream call that undici takes as its `signal` (an EventEmitter that
 * emits `abort`), without an AbortController: creating one and its AbortSignal, and undici's
 * listener on it, were about 3 % of the proxy's CPU per streaming call (docs/performance.md).
 */
export class Cancel extends EventEmitter {
  aborted = false;

  abort(): void {
    if (this.aborted) return;
    this.aborted = true;
    this.emit("abort");
  }
}

/** What an upstream call can be cancelled by: a Cancel on the hot path, an AbortSignal elsewhere. */
export type Cancellation = AbortSignal | Cancel;

/** Resolves after `ms`, or at once when `signal` fires. */
export function pause(ms: number, signal: Cancellation): Promise<void> {
  if (signal.aborted) return Promise.resolve();
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      if (signal instanceof Cancel) signal.off("abort", done);
      else signal.removeEventListener("abort", done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    if (signal instanceof Cancel) signal.once("abort", done);
    else signal.addEventListener("abort", done, { once: true });
  });
}
