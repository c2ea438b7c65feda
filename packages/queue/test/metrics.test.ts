import { randomUUID } from "node:crypto";
import { createLogger } from "@gw/telemetry";
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bullmqQueue } from "../src/bullmq.ts";
import { bullmqConsumer } from "../src/consumer.ts";
import type { CallRef, JobConsumer, JobQueue, ProcessCall } from "../src/jobs.ts";
import { memoryQueue } from "../src/memory.ts";
import { startTestTelemetry } from "./otel.ts";

const REDIS_URL = process.env.REDIS_URL || undefined;
const logger = createLogger({ level: "silent", service: "test" });

const newJob = (): CallRef => ({
  invocationId: `inv_${randomUUID()}`,
  tenantId: `t_${randomUUID()}`,
  agentId: `agt_${randomUUID()}`,
});

let otel: ReturnType<typeof startTestTelemetry>;
beforeAll(() => {
  otel = startTestTelemetry();
});
afterAll(async () => {
  await otel?.stop();
});

/** Sum of a metric's points whose attributes include `match`. */
async function value(name: string, match: Record<string, string>): Promise<number | undefined> {
  const pts = (await otel.points(name)).filter((p) =>
    Object.entries(match).every(([k, v]) => p.attributes[k] === v),
  );
  return pts.length ? pts.reduce((n, p) => n + (p.value as number), 0) : undefined;
}

/**
 * With one job held by the processor (concurrency 1) and two behind it, the gauges show two
 * waiting and an oldest age; a failing job and the rest are counted by outcome, without tenant ids.
 */
async function gaugesAndOutcomes(
  queueName: string,
  queue: JobQueue,
  consume: (p: ProcessCall) => JobConsumer,
) {
  const jobs = [newJob(), newJob(), newJob()];
  const failing = jobs[2]?.invocationId;
  let release!: () => void;
  const held = new Promise<void>((r) => (release = r));
  let started = 0;
  let finished = 0;
  // Counters are cumulative over the file: compare with what they were before.
  const failedBefore = (await value("gw.worker.jobs", { outcome: "failed" })) ?? 0;
  const completedBefore = (await value("gw.worker.jobs", { outcome: "completed" })) ?? 0;
  const consumer = consume(async (j) => {
    started++;
    try {
      if (started === 1) await held;
      if (j.invocationId === failing) throw new Error("upstream exploded");
    } finally {
      finished++;
    }
  });
  try {
    for (const j of jobs) await queue.enqueue(j);
    await expect.poll(() => started).toBe(1);
    expect(await value("gw.queue.depth", { queue: queueName, state: "wait" })).toBe(2);
    expect(await value("gw.queue.oldest_age", { queue: queueName })).toBeGreaterThanOrEqual(0);
    release();
    await expect.poll(() => finished).toBe(3);
    await expect.poll(() => value("gw.queue.depth", { queue: queueName, state: "wait" })).toBe(0);
    expect(await value("gw.queue.oldest_age", { queue: queueName })).toBe(0);
    await expect.poll(() => value("gw.worker.jobs", { outcome: "failed" })).toBe(failedBefore + 1);
    expect(await value("gw.worker.jobs", { outcome: "completed" })).toBe(completedBefore + 2);
    for (const p of await otel.points("gw.worker.jobs")) expect(p.attributes).not.toHaveProperty("tenant_id");
  } finally {
    release();
    await consumer.close();
  }
}

describe("queue metrics, in-process queue", () => {
  it("reports depth, oldest age and job outcomes", async () => {
    const mem = memoryQueue({ concurrency: 1, logger, name: "gw-mem-metrics" });
    await gaugesAndOutcomes("gw-mem-metrics", mem.queue, mem.consume);
  });
});

if (!REDIS_URL) {
  describe("queue metrics, BullMQ", () => {
    it.skip("skipped: REDIS_URL is not set (pnpm test without servers; CI sets it, see docs/testing.md)", () => {});
  });
}

describe.skipIf(!REDIS_URL)("queue metrics, BullMQ", () => {
  const conns: Redis[] = [];
  const conn = () => {
    const c = new Redis(REDIS_URL as string, { maxRetriesPerRequest: null });
    conns.push(c);
    return c;
  };
  afterAll(async () => {
    for (const c of conns) await c.quit().catch(() => {});
  });

  it("reports the wait list's depth and oldest job from Redis, and job outcomes", async () => {
    const name = `gw-metrics-${randomUUID()}`;
    const queue = bullmqQueue({ name, connection: conn() });
    try {
      await gaugesAndOutcomes(name, queue, (p) =>
        bullmqConsumer({
          name,
          connection: conn(),
          concurrency: 1,
          lockMs: 5_000,
          logger,
          process: p,
          onLost: async () => false,
          sampleMs: 0,
        }),
      );
    } finally {
      await queue.close();
    }
  });
});
