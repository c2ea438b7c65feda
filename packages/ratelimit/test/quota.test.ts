import { randomUUID } from "node:crypto";
import { once } from "node:events";
import { createServer, type Server, type Socket } from "node:net";
import { createLogger } from "@gw/telemetry";
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type QuotaCounter, type Quotas, quotaHashKey } from "../src/quota.ts";
import { createQuotas } from "../src/quota-redis.ts";
import { scriptRedis } from "./redis-doubles.ts";

const REDIS_URL = process.env.REDIS_URL || undefined;
const logger = createLogger({ level: "silent", service: "test" });
const DAY = 86_400_000;
const counter = (rule: string, key: string, limit: number): QuotaCounter => ({
  rule,
  key,
  limit,
  windowMs: DAY,
});

/** The contract both stores keep (docs/policy.md "Quotas"). */
function contract(name: string, make: () => { a: Quotas; b: Quotas }) {
  describe(name, () => {
    it("all or nothing: a refused call consumes none of its other counters", async () => {
      const { a } = make();
      const t = `t_${randomUUID()}`;
      expect(await a.charge(t, 1, [counter("2", "k", 1)])).toEqual({ allowed: true });
      const refused = await a.charge(t, 1, [counter("1", "k", 1), counter("2", "k", 1)]);
      expect(refused).toMatchObject({ allowed: false, index: 1 });
      if (refused.allowed) throw new Error("unreachable");
      expect(refused.retryAfterSeconds).toBeGreaterThanOrEqual(1);
      expect(refused.retryAfterSeconds).toBeLessThanOrEqual(86_400);
      // Rule 1 was not charged by the refused call: it still has its one request.
      expect(await a.charge(t, 1, [counter("1", "k", 1)])).toEqual({ allowed: true });
      const used = await a.usage(t, 1, [
        { rule: "1", limit: 1, windowMs: DAY },
        { rule: "2", limit: 1, windowMs: DAY },
      ]);
      expect(used.map((u) => [u.rule, u.key, u.used])).toEqual([
        ["1", "k", 1],
        ["2", "k", 1],
      ]);
    });

    it("counters are per tenant, policy version, rule and key value", async () => {
      const { a } = make();
      const t = `t_${randomUUID()}`;
      expect((await a.charge(t, 1, [counter("1", "k", 1)])).allowed).toBe(true);
      expect((await a.charge(t, 1, [counter("1", "k", 1)])).allowed).toBe(false);
      expect((await a.charge(t, 2, [counter("1", "k", 1)])).allowed).toBe(true);
      expect((await a.charge(t, 1, [counter("3", "k", 1)])).allowed).toBe(true);
      expect((await a.charge(t, 1, [counter("1", "k2", 1)])).allowed).toBe(true);
      expect((await a.charge(`t_${randomUUID()}`, 1, [counter("1", "k", 1)])).allowed).toBe(true);
    });

    it("two replicas share one count", async () => {
      const { a, b } = make();
      const t = `t_${randomUUID()}`;
      const results = await Promise.all(
        [...Array(10)].map((_, i) => (i % 2 ? a : b).charge(t, 1, [counter("1", "shared", 6)])),
      );
      expect(results.filter((r) => r.allowed)).toHaveLength(6);
    });
  });
}

contract("quota counters in this process", () => {
  const a = createQuotas({ logger });
  return { a, b: a };
});

describe.skipIf(!REDIS_URL)("quota counters on Redis", () => {
  let connA: Redis;
  let connB: Redis;
  beforeAll(async () => {
    connA = new Redis(REDIS_URL as string, { maxRetriesPerRequest: null, enableAutoPipelining: true });
    connB = new Redis(REDIS_URL as string, { maxRetriesPerRequest: null, enableAutoPipelining: true });
    await Promise.all([connA.ping(), connB.ping()]);
  });
  afterAll(async () => {
    await Promise.all([connA?.quit(), connB?.quit()]);
  });

  contract("the Redis store", () => ({
    a: createQuotas({ redis: connA, logger }),
    b: createQuotas({ redis: connB, logger }),
  }));

  it("above 1,000 per window replicas lease counts: never more than the limit, at most 1 % less", async () => {
    const a = createQuotas({ redis: connA, logger });
    const b = createQuotas({ redis: connB, logger });
    const t = `t_${randomUUID()}`;
    let admitted = 0;
    for (let round = 0; round < 44; round++) {
      const results = await Promise.all(
        [...Array(50)].map((_, i) =>
          (i % 2 ? a : b).charge(t, 1, [counter("1", "k", 2_000), counter("2", "k", 5)]),
        ),
      );
      admitted += results.filter((r) => r.allowed).length;
      if (round === 0) {
        // The exact counter beside it refuses from the sixth call on, whatever the leases hold.
        expect(results.filter((r) => r.allowed)).toHaveLength(5);
        const spent = results.find((r) => !r.allowed);
        expect(spent).toMatchObject({ allowed: false, index: 1 });
      }
    }
    expect(admitted).toBe(5);
    let leased = 0;
    for (let round = 0; round < 44; round++) {
      const results = await Promise.all(
        [...Array(50)].map((_, i) => (i % 2 ? a : b).charge(t, 1, [counter("3", "k", 2_000)])),
      );
      leased += results.filter((r) => r.allowed).length;
    }
    expect(leased).toBeLessThanOrEqual(2_000);
    // At most one lease (1 % of the limit) per replica is held unspent when the calls stop.
    expect(leased).toBeGreaterThanOrEqual(1_960);
    const [use] = await a.usage(t, 1, [{ rule: "3", limit: 2_000, windowMs: DAY }], "k");
    expect(use?.used).toBeLessThanOrEqual(2_000);
    expect(use?.used).toBeGreaterThanOrEqual(leased);
  });

  it("a busy leased counter is topped up in the background: no call waits for Redis once leases run", async () => {
    // A Redis whose script replies take 20 ms more than they do: a call charged through Redis
    // is still pending after the turn it started in; one charged from a lease is not.
    const { redis: slow } = scriptRedis(REDIS_URL as string, 20);
    try {
      const q = createQuotas({ redis: slow, logger });
      const t = `t_${randomUUID()}`;
      const counters = [counter("1", "k", 1_000_000), counter("2", "tenant", 1_000_000)];
      let waited = 0;
      const paced = async (n: number) => {
        for (let i = 0; i < n; i++) {
          let settled = false;
          const charged = q.charge(t, 1, counters).then((v) => {
            settled = true;
            return v;
          });
          await new Promise((r) => setImmediate(r));
          if (!settled) waited++;
          expect((await charged).allowed).toBe(true);
          await new Promise((r) => setTimeout(r, 1));
        }
      };
      await paced(400); // the leases grow until a quarter of one outlasts a top-up
      // A stall of this process longer than a lease's life (a loaded machine) makes one call wait
      // honestly; a top-up in the foreground would make every round wait, so one clean round of
      // three shows it.
      for (let round = 0; round < 3; round++) {
        waited = 0;
        await paced(300);
        if (waited === 0) break;
      }
      expect(waited).toBe(0);
    } finally {
      slow.disconnect();
    }
  });

  it("a 10 KB key value is stored as its digest, and the counter expires with its window", async () => {
    const quotas = createQuotas({ redis: connA, logger });
    const t = `t_${randomUUID()}`;
    const long = "k".repeat(10_240);
    expect((await quotas.charge(t, 1, [{ rule: "1", key: long, limit: 5, windowMs: 1_000 }])).allowed).toBe(
      true,
    );
    const hash = quotaHashKey(t, 1, "1", Math.floor(Date.now() / 1_000) * 1_000);
    const fields = await connA.hkeys(hash);
    // The window may have just ended (the hash then is the next window's, empty): only bound it.
    for (const f of fields) expect(f).toMatch(/^sha256:[0-9a-f]{64}$/);
    const scanned = await connA.keys(`gw:q:{${encodeURIComponent(t)}}:*`);
    expect(scanned).toHaveLength(1);
    const ttl = await connA.pttl(scanned[0] as string);
    expect(ttl).toBeGreaterThan(0);
    expect(ttl).toBeLessThanOrEqual(2_000);
  });
});

// The documented fail mode (docs/policy.md "Quotas"): like the per-agent limiter, fail open to
// counting in each replica, without waiting on a Redis that does not answer.
describe("Redis that accepts connections but never answers", () => {
  let server: Server;
  const sockets = new Set<Socket>();
  beforeAll(async () => {
    server = createServer((s) => {
      sockets.add(s);
      s.on("error", () => {});
    });
    server.listen(0, "127.0.0.1");
    await once(server, "listening");
  });
  afterAll(async () => {
    for (const s of sockets) s.destroy();
    server.close();
  });

  it("every charge still answers, counted in this replica; the listing is a 503", async () => {
    const address = server.address();
    if (!address || typeof address === "string") throw new Error("no port");
    const redis = new Redis(address.port, "127.0.0.1", {
      maxRetriesPerRequest: null,
      enableReadyCheck: false,
    });
    redis.on("error", () => {});
    const quotas = createQuotas({ redis, logger, timeoutMs: 200 });
    try {
      const results = [];
      for (let i = 0; i < 4; i++) results.push(await quotas.charge("t_outage", 1, [counter("1", "k", 2)]));
      expect(results.map((r) => r.allowed)).toEqual([true, true, false, false]);
      await expect(
        quotas.usage("t_outage", 1, [{ rule: "1", limit: 2, windowMs: DAY }]),
      ).rejects.toMatchObject({
        kind: "unavailable",
        message: "quota counts unavailable",
      });
    } finally {
      redis.disconnect();
    }
  });
});
