import { randomUUID } from "node:crypto";
import { createLogger } from "@gw/telemetry";
import { Queue, Worker } from "bullmq";
import { Redis } from "ioredis";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { bullmqConsumer } from "../src/consumer.ts";
import type { CallRef, Delivery, JobConsumer, ProcessCall } from "../src/jobs.ts";

const REDIS_URL = process.env.REDIS_URL || undefined;
const logger = createLogger({ level: "silent", service: "test" });

const newCall = (): CallRef => ({
  invocationId: `inv_${randomUUID()}`,
  tenantId: `t_${randomUUID()}`,
  agentId: `agt_${randomUUID()}`,
});

/** A gate the processor waits on until the test opens it. */
function gate() {
  let open!: () => void;
  const opened = new Promise<void>((r) => (open = r));
  return { open, opened };
}

if (!REDIS_URL) {
  describe("BullMQ consumer", () => {
    it.skip("skipped: REDIS_URL is not set (pnpm test without servers; CI sets it, see docs/testing.md)", () => {});
  });
}

describe.skipIf(!REDIS_URL)("BullMQ consumer", () => {
  const conns: Redis[] = [];
  const conn = () => {
    const c = new Redis(REDIS_URL as string, { maxRetriesPerRequest: null });
    conns.push(c);
    return c;
  };
  let cleanups: Array<() => Promise<void>> = [];
  afterEach(async () => {
    for (const c of cleanups.reverse()) await c().catch(() => {});
    cleanups = [];
  });
  afterAll(async () => {
    for (const c of conns) await c.quit().catch(() => {});
  });

  /** A fresh queue (random name), obliterated after the test, and a way to add jobs of calls. */
  function freshQueue() {
    const name = `gw-consumer-${randomUUID()}`;
    const queue = new Queue(name, { connection: conn() });
    cleanups.push(async () => {
      await queue.obliterate({ force: true });
      await queue.close();
    });
    // The producer's job: the calls accepted together, ids only, completed jobs removed.
    const add = (calls: CallRef[], opts: { removeOnComplete?: boolean } = {}) =>
      queue.add("calls", { calls }, { attempts: 1, removeOnComplete: opts.removeOnComplete ?? true });
    return { name, queue, add };
  }

  function consumer(
    name: string,
    process: ProcessCall,
    opts: { concurrency?: number; lockMs?: number; onLost?: (call: CallRef) => Promise<boolean> } = {},
  ): JobConsumer {
    const c = bullmqConsumer({
      name,
      connection: conn(),
      concurrency: opts.concurrency ?? 1,
      lockMs: opts.lockMs ?? 5_000,
      logger,
      process,
      onLost: opts.onLost ?? (async () => false),
      sampleMs: 0,
    });
    let closing: Promise<void> | undefined;
    const close = () => {
      closing ??= c.close();
      return closing;
    };
    cleanups.push(close);
    return { close };
  }

  it("takes a job only when a call slot is free: the other jobs stay waiting in Redis", async () => {
    const { name, queue, add } = freshQueue();
    const jobs = Array.from({ length: 5 }, () => [newCall(), newCall(), newCall()]);
    for (const calls of jobs) await add(calls);
    const release = gate();
    const ran = new Map<string, number>();
    let running = 0;
    consumer(
      name,
      async (call) => {
        ran.set(call.invocationId, (ran.get(call.invocationId) ?? 0) + 1);
        running++;
        try {
          await release.opened;
        } finally {
          running--;
        }
      },
      { concurrency: 2 },
    );

    try {
      await expect.poll(() => running).toBe(2);
      // Time for a consumer that hoards to take more jobs.
      await new Promise((r) => setTimeout(r, 500));
      expect(running).toBe(2);
      // The first job's two calls run, its third waits for a slot; the four other jobs wait in Redis.
      expect(await queue.getJobCounts("active", "wait")).toEqual({ active: 1, wait: 4 });
    } finally {
      release.open();
    }
    const all = jobs.flat().map((c) => c.invocationId);
    await expect.poll(() => ran.size).toBe(all.length);
    for (const id of all) expect(ran.get(id)).toBe(1);
    await expect
      .poll(() => queue.getJobCounts("active", "wait", "completed", "failed"))
      .toEqual({ active: 0, wait: 0, completed: 0, failed: 0 });
  });

  it("lets a second consumer take the waiting jobs while the first is saturated", async () => {
    const { name, add } = freshQueue();
    const [a, b] = [newCall(), newCall()];
    await add([a]);
    await add([b]);
    const release = gate();
    const running = new Set<string>();
    const process = (who: string) => async (call: CallRef) => {
      running.add(`${who}:${call.invocationId}`);
      await release.opened;
    };
    try {
      consumer(name, process("first"));
      await expect.poll(() => running.size).toBe(1);
      await new Promise((r) => setTimeout(r, 500));
      consumer(name, process("second"));
      await expect.poll(() => running.size).toBe(2);
      expect([...running].sort()).toEqual([`first:${a.invocationId}`, `second:${b.invocationId}`].sort());
    } finally {
      release.open();
    }
  });

  it("ends only the call whose processor throws through onLost; the job's other calls run and it completes", async () => {
    const { name, queue, add } = freshQueue();
    const calls = [newCall(), newCall(), newCall()];
    const bad = calls[1]?.invocationId;
    const processed: string[] = [];
    const lost: string[] = [];
    const job = await add(calls, { removeOnComplete: false });
    consumer(
      name,
      async (call) => {
        if (call.invocationId === bad) throw new Error("boom");
        processed.push(call.invocationId);
      },
      {
        concurrency: 2,
        onLost: async (call) => {
          lost.push(call.invocationId);
          return true;
        },
      },
    );
    await expect.poll(() => queue.getJobState(job.id ?? "")).toBe("completed");
    expect(lost).toEqual([bad]);
    expect(processed.sort()).toEqual(
      calls
        .map((c) => c.invocationId)
        .filter((id) => id !== bad)
        .sort(),
    );
  });

  it("close() waits for the calls in flight and completes their job", async () => {
    const { name, queue, add } = freshQueue();
    const calls = [newCall(), newCall()];
    const job = await add(calls, { removeOnComplete: false });
    const release = gate();
    let started = 0;
    let finished = 0;
    const c = consumer(
      name,
      async () => {
        started++;
        await release.opened;
        await new Promise((r) => setTimeout(r, 50));
        finished++;
      },
      { concurrency: 2 },
    );
    await expect.poll(() => started).toBe(2);
    let closed = false;
    const closing = c.close().then(() => {
      closed = true;
    });
    try {
      // Longer than close's 1 s guard on completing the jobs: it must wait for the calls themselves.
      await new Promise((r) => setTimeout(r, 1_500));
      expect(closed).toBe(false);
    } finally {
      release.open();
    }
    await closing;
    expect(finished).toBe(2);
    expect(await queue.getJobState(job.id ?? "")).toBe("completed");
    expect(await queue.getJobCounts("active", "wait")).toEqual({ active: 0, wait: 0 });
  });

  // This project's timeout is 30 s; a close that waited for BullMQ's blocking fetch to give up
  // (5 s) instead of waking it would pass that, so this test keeps under vitest's default.
  it("close() while idle, blocked waiting for a job, returns", { timeout: 4_000 }, async () => {
    const { name } = freshQueue();
    const c = consumer(name, async () => {});
    // Long enough for the consumer to find the queue empty and block in getNextJob.
    await new Promise((r) => setTimeout(r, 500));
    await c.close();
  });

  it("renews the lock of a job whose calls outlast it: no redelivery", async () => {
    const { name, queue, add } = freshQueue();
    const call = newCall();
    const job = await add([call], { removeOnComplete: false });
    const deliveries: Delivery[] = [];
    // Two slots: a job taken back as stalled would be fetched again by this same consumer.
    consumer(
      name,
      async (_c, delivery) => {
        deliveries.push(delivery);
        await new Promise((r) => setTimeout(r, 2_500));
      },
      { concurrency: 2, lockMs: 1_000 },
    );
    await expect.poll(() => queue.getJobState(job.id ?? ""), { timeout: 10_000 }).toBe("completed");
    expect(deliveries).toEqual([{ redelivered: false }]);
  });

  it("ends through onLost the calls of a job that stalled twice, when it is next fetched", async () => {
    const { name, queue, add } = freshQueue();
    const calls = [newCall(), newCall()];
    const job = await add(calls);
    // A worker that takes the job and dies twice (never renews its lock), with a fast stalled check.
    const dying = new Worker(name, null, {
      connection: conn(),
      lockDuration: 300,
      stalledInterval: 200,
      maxStalledCount: 1,
    });
    cleanups.push(() => dying.close(true));
    await dying.startStalledCheckTimer();
    for (let n = 0; n < 2; n++) {
      await expect
        .poll(() => dying.getNextJob(`dying:${n}`, { block: false }).then((j) => j?.id))
        .toBe(job.id);
      await expect.poll(() => queue.getJobCounts("active", "wait")).toEqual({ active: 0, wait: 1 });
    }
    await dying.close(true);

    const processed: string[] = [];
    const lost: string[] = [];
    consumer(
      name,
      async (call) => {
        processed.push(call.invocationId);
      },
      {
        onLost: async (call) => {
          lost.push(call.invocationId);
          return true;
        },
      },
    );
    await expect.poll(() => lost.length).toBe(2);
    expect(lost.sort()).toEqual(calls.map((c) => c.invocationId).sort());
    expect(processed).toEqual([]);
    expect(await queue.getJobState(job.id ?? "")).toBe("failed");
  });
});
