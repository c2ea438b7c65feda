import { Pool } from "undici";
import { nowMs } from "./clock.ts";
import { percentile } from "./stats.ts";

export type OpenLoopResult = { offered: number; achieved: number; p50: number; p99: number; errors: number };
/**
 * One answered request: the id its answer named; when it was due (`from`, as its latency counts),
 * actually handed to the client (`sent`) and answered (`to`), in ms of the monotonic clock.
 */
export type Answer = { id: string; from: number; sent: number; to: number };

/**
 * Open-loop load: requests leave at a fixed arrival rate whatever the answers do, so a slow
 * server builds a queue instead of slowing the generator down (closed-loop concurrency only
 * mirrors throughput). Latency is measured from each request's scheduled send time, so time spent
 * waiting behind a stalled generator or a full pool counts too (no coordinated omission).
 */
export async function openLoop(opts: {
  url: string;
  headers: Record<string, string>;
  body: string;
  ratePerSecond: number;
  seconds: number;
  expectStatus: number;
  /** Given: each answer's `invocation_id` and times are pushed here (the body is read, not dropped). */
  answers?: Answer[];
}): Promise<OpenLoopResult> {
  const u = new URL(opts.url);
  const pool = new Pool(u.origin, { connections: 256, pipelining: 1 });
  const n = Math.round(opts.ratePerSecond * opts.seconds);
  const interval = 1000 / opts.ratePerSecond;
  const latencies: number[] = [];
  let errors = 0;
  const t0 = nowMs();
  // From nowMs() to the monotonic clock (process.hrtime) the proxy's timeline is written in.
  const mono = Number(process.hrtime.bigint()) / 1e6 - t0;
  const inflight: Promise<void>[] = [];
  for (let i = 0; i < n; i++) {
    const scheduled = t0 + i * interval;
    const wait = scheduled - nowMs();
    if (wait > 1) await new Promise((r) => setTimeout(r, wait));
    // Timed from the scheduled send (a late send counts its wait), or from the actual one when the
    // timer let it go early: the earlier of the two.
    const sent = nowMs();
    const from = Math.min(scheduled, sent);
    inflight.push(
      pool
        .request({ path: u.pathname, method: "POST", headers: opts.headers, body: opts.body })
        .then(async (res) => {
          const answers = opts.answers;
          const id = answers
            ? ((await res.body.json()) as { invocation_id?: string }).invocation_id
            : undefined;
          if (!answers) await res.body.dump();
          const to = nowMs();
          if (res.statusCode !== opts.expectStatus) errors++;
          latencies.push(to - from);
          if (answers && id) answers.push({ id, from: from + mono, sent: sent + mono, to: to + mono });
        })
        .catch(() => {
          errors++;
        }),
    );
  }
  await Promise.all(inflight);
  const elapsed = (nowMs() - t0) / 1000;
  await pool.close();
  return {
    offered: opts.ratePerSecond,
    achieved: latencies.length / elapsed,
    p50: percentile(latencies, 50),
    p99: percentile(latencies, 99),
    errors,
  };
}
