import { appendFileSync } from "node:fs";

/**
 * The 202's timeline, for the bench only (docs/performance.md, "Where the 202's tail goes"): with
 * `GW_PROXY_TIMELINE` set at start-up, each transactional call answered 202 appends one JSON line
 * to that file: its invocation id and when it passed each point below, in ms of the machine's
 * monotonic clock (CLOCK_MONOTONIC, the clock of `process.hrtime`), so the bench can put the
 * caller's own send and receive times beside them. Unset (always, outside the bench), `timeline`
 * is null and every mark is one property read: nothing is allocated, nothing is written.
 */
export type Timeline = {
  /** `key`: the object a step has at hand (the request, then the call); kept until `done`. */
  mark(key: object, point: Point): void;
  /** The call answered: its marks, under the request and the call, become one line. */
  done(request: object, call: object, invocationId: string): void;
};

/** In the order a 202 passes them: arrival, authenticated, insert sent, row durable, job handed to the queue, answered. */
export const POINTS = ["arrived", "authenticated", "insert", "durable", "enqueued", "answered"] as const;
export type Point = (typeof POINTS)[number];

/** Set once by `startTimeline`; null when the switch is off. */
export let timeline: Timeline | null = null;

/** Reads the switch once, at start-up (the proxy app's construction). */
export function startTimeline(file: string | undefined): void {
  if (!file) return;
  // performance.now() is cheap; this offset turns it into the monotonic clock other processes read.
  const offset = Number(process.hrtime.bigint()) / 1e6 - performance.now();
  const marks = new WeakMap<object, Partial<Record<Point, number>>>();
  let lines: string[] = [];
  const flush = () => {
    if (lines.length === 0) return;
    const out = lines.join("");
    lines = [];
    appendFileSync(file, out);
  };
  // Written in batches off the answers' path; the bench reads the file between its steps.
  setInterval(flush, 250).unref();
  process.once("exit", flush);
  timeline = {
    mark(key, point) {
      const m = marks.get(key) ?? {};
      m[point] = performance.now() + offset;
      marks.set(key, m);
    },
    done(request, call, invocationId) {
      const t = { ...marks.get(request), ...marks.get(call), answered: performance.now() + offset };
      lines.push(`${JSON.stringify({ id: invocationId, t: POINTS.map((p) => t[p] ?? null) })}\n`);
    },
  };
}
