import { setTimeout as sleep } from "node:timers/promises";
import { nowMs } from "./clock.ts";
import { load } from "./load.ts";
import type { BenchStore } from "./store.ts";

const BODY = JSON.stringify({ prompt: "hello", n: 1 });

/**
 * Submits transactional calls for `seconds` at `concurrency` with the load generator of the other
 * steps (wrk: C, so the submitting client takes little of the shared CPU; the bench's own undici
 * client, with its poll of each invocation, spent ~400 µs per invocation in the bench process),
 * waits until none is open any more, then checks in Postgres that every call answered 202
 * succeeded. Returns succeeded invocations per second, from the first
 * submit to the last `completed_at` recorded, and how many there were.
 */
export async function endToEnd(opts: {
  proxy: string;
  store: BenchStore;
  tenantId: string;
  agentId: string;
  token: string;
  seconds: number;
  concurrency: number;
  /** Called once every invocation is terminal. */
  onCompleted?: () => void;
}): Promise<{ perSecond: number; succeeded: number }> {
  await drained(opts.store, opts.tenantId, opts.agentId);
  // Wall clock: compared with the completed_at the worker recorded (same machine, same clock).
  const since = new Date();
  const submitted = await load({
    url: `${opts.proxy}/v1/proxy/${opts.agentId}`,
    headers: { authorization: `Bearer ${opts.token}`, "content-type": "application/json" },
    body: BODY,
    connections: opts.concurrency,
    seconds: opts.seconds,
  });
  if (submitted.errors > 0)
    throw new Error(`transact: ${submitted.errors} submissions were not answered 202`);
  await drained(opts.store, opts.tenantId, opts.agentId, 120_000, 50);
  opts.onCompleted?.();
  const done = await opts.store.completions(opts.tenantId, opts.agentId, since);
  // Every 202 the generator received must have run. Only the calls in flight when it stopped
  // (at most one per connection) may have ended otherwise: their callers were gone before the 202.
  if (done.succeeded < submitted.requests || done.failed > opts.concurrency)
    throw new Error(
      `transact: ${submitted.requests} answered 202, ${done.succeeded} succeeded, ${done.failed} failed`,
    );
  return {
    perSecond: done.succeeded / ((done.last - since.getTime()) / 1000),
    succeeded: done.succeeded,
  };
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
  while (await store.anyOpen(tenantId, agentId)) {
    if (nowMs() > deadline) throw new Error(`the worker did not drain the queue within ${withinMs / 1000} s`);
    await sleep(everyMs);
  }
}
