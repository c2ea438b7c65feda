import { Pool } from "undici";
import { nowMs } from "./clock.ts";
import { percentile } from "./stats.ts";

export type OpenLoopResult = { offered: number; achieved: number; p50: number; p99: number; errors: number };

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
}): Promise<OpenLoopResult> {
  const u = new URL(opts.url);
  const pool = new Pool(u.origin, { connections: 256, pipelining: 1 });
  const n = Math.round(opts.ratePerSecond * opts.seconds);
  const interval = 1000 / opts.ratePerSecond;
  const latencies: number[] = [];
  let errors = 0;
  const t0 = nowMs();
  const inflight: Promise<void>[] = [];
  for (let i = 0; i < n; i++) {
    const scheduled = t0 + i * interval;
    const wait = scheduled - nowMs();
    if (wait > 1) await new Promise((r) => setTimeout(r, wait));
    // Timed from the scheduled send (a late send counts its wait), or from the actual one when the
    // timer let it go early: the earlier of the two.
    const from = Math.min(scheduled, nowMs());
    inflight.push(
      pool
        .request({ path: u.pathname, method: "POST", headers: opts.headers, body: opts.body })
        .then(async (res) => {
          await res.body.dump();
          if (res.statusCode !== opts.expectStatus) errors++;
          latencies.push(nowMs() - from);
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
