import { setTimeout as sleep } from "node:timers/promises";
import { Pool } from "undici";
import { nowMs } from "./clock.ts";

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

type Counts = (status: string) => Promise<number>;

/**
 * Submits `n` transactional calls at `concurrency`, waits until every one is terminal, then polls
 * each through the proxy's poll endpoint (as a caller would) to check it succeeded. Returns
 * completed invocations per second, from the first submit to the last completion observed.
 */
export async function endToEnd(opts: {
  proxy: string;
  controlPlane: string;
  agentId: string;
  token: string;
  n: number;
  concurrency: number;
  /** Called once every invocation is terminal, before they are polled one by one. */
  onCompleted?: () => void;
}): Promise<{ perSecond: number; failed: number }> {
  const auth = { authorization: `Bearer ${opts.token}` };
  const cp = new Pool(opts.controlPlane, { connections: 2 });
  const count: Counts = async (status) => {
    const res = await cp.request({
      path: `/v1/invocations?agent_id=${opts.agentId}&status=${status}&limit=1`,
      method: "GET",
      headers: auth,
    });
    const body = (await res.body.json()) as { total: number };
    return body.total;
  };
  const terminal = async () => (await count("succeeded")) + (await count("failed"));
  const before = await terminal();

  const pool = new Pool(opts.proxy, { connections: opts.concurrency });
  const ids: string[] = [];
  const t0 = nowMs();
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
  const deadline = nowMs() + 120_000;
  while ((await terminal()) - before < opts.n) {
    if (nowMs() > deadline) throw new Error("transactional invocations did not complete within 120 s");
    // Counting is a query of its own: often enough to time the run, rarely enough not to load it.
    await sleep(50);
  }
  const perSecond = opts.n / ((nowMs() - t0) / 1000);
  opts.onCompleted?.();

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
  await Promise.all([pool.close(), cp.close()]);
  return { perSecond, failed };
}

/** Waits until the agent has no pending or running invocations (the worker caught up). */
export async function drained(controlPlane: string, token: string, agentId: string): Promise<void> {
  const deadline = nowMs() + 300_000;
  for (;;) {
    let open = 0;
    for (const status of ["pending", "running"]) {
      const res = await fetch(`${controlPlane}/v1/invocations?agent_id=${agentId}&status=${status}&limit=1`, {
        headers: { authorization: `Bearer ${token}` },
      });
      open += ((await res.json()) as { total: number }).total;
    }
    if (open === 0) return;
    if (nowMs() > deadline) throw new Error("the worker did not drain the queue within 300 s");
    await sleep(100);
  }
}
