/**
 * Wall-clock milliseconds with sub-millisecond precision, comparable across processes on one
 * machine (Date.now() has only whole milliseconds): the process's time origin plus its monotonic
 * clock.
 */
export function nowMs(): number {
  return performance.timeOrigin + performance.now();
}
