import { setTimeout as sleep } from "node:timers/promises";
import { Pool } from "undici";
import { nowMs } from "./clock.ts";
import type { BenchStore } from "./store.ts";

const BODY = JSON.stringify({ prompt: "hello", n: 1 });

/** Runs `fn` for i in 0..n-1 with at most `concurrency` in flight. */
async function pooled(n: number, concurrency: number, fn: (i: number) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(n, concurrency) }, async () => {
      for (let i = next++; i < n; i = next++) await fn(i);
    }),
  );
}

/** N calls straight to the upstream at `concurrency`: the baseline for completed calls/s. */
export async function directCalls(url: string, n: number, concurrency: number): Promise<number> {
  const u = new URL(url);
  const pool = new Pool(u.origin, { connections: concurrency });
  const t0 = nowMs();
  await pooled(n, concurrency, async () => {
    const res = await pool.request({ path: u.pathname, method: "POST", body: BODY });
    await res.body.dump();
    if (res.statusCode !== 200) throw new Error(`direct: ${res.statusCode}`);
  });
  const rate = n / ((nowMs() - t0) / 1000);
  await pool.close();
  return rate;
}

/**
 * Submits `n` transactional calls at `concurrency`, waits until none is open any more, then polls
 * each through the proxy's poll endpoint (as a caller would) to check it succeeded. Returns
 * completed invocations per second, from the first submit to the last `completed_at` recorded.
 */
export async function endToEnd(opts: {
  proxy: string;
  store: BenchStore;
  tenantId: string;
  agentId: string;
  token: string;
  n: number;
  concurrency: number;
  /** Called once every invocation is terminal, before they are polled one by one. */
  onCompleted?: () => void;
}): Promise<{ perSecond: number; failed: number }> {
  const auth = { authorization: `Bearer ${opts.token}` };
  await drained(opts.store, opts.tenantId, opts.agentId);
  const pool = new Pool(opts.proxy, { connections: opts.concurrency });
  const ids: string[] = [];
  // Wall clock: compared with the completed_at the worker recorded (same machine, same clock).
  const since = new Date();
  await pooled(opts.n, opts.concurrency, async () => {
    const res = await pool.request({
      path: `/v1/proxy/${opts.agentId}`,
      method: "POST",
      headers: { ...auth, "content-type": "application/json" },
      body: BODY,
    });
    const body = (await res.body.json()) as { invocation_id: string };
    if (res.statusCode !== 202) throw new Error(`transact: ${res.statusCode}`);
    ids.push(body.invocation_id);
  });
  await drained(opts.store, opts.tenantId, opts.agentId, 120_000, 50);
  opts.onCompleted?.();
  const last = await opts.store.lastCompletion(opts.tenantId, opts.agentId, since);
  const perSecond = opts.n / ((last - since.getTime()) / 1000);

  let failed = 0;
  await pooled(ids.length, 16, async (i) => {
    const res = await pool.request({
      path: `/v1/proxy/${opts.agentId}/invocations/${ids[i]}`,
      method: "GET",
      headers: auth,
    });
    const body = (await res.body.json()) as { status: string };
    if (body.status !== "succeeded") failed++;
  });
  await pool.close();
  return { perSecond, failed };
}

/** Waits until the agent has no pending or running invocations (the worker caught up). */
export async function drained(
  store: BenchStore,
  tenantId: string,
  agentId: string,
  withinMs = 300_000,
  everyMs = 100,
): Promise<void> {
  const deadline = nowMs() + withinMs;
  while ((await store.open(tenantId, agentId)) > 0) {
    if (nowMs() > deadline) throw new Error(`the worker did not drain the queue within ${withinMs / 1000} s`);
    await sleep(everyMs);
  }
}
