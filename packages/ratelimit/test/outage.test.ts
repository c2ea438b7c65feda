import { once } from "node:events";
import { createServer, type Server, type Socket } from "node:net";
import { Writable } from "node:stream";
import { createLogger } from "@gw/telemetry";
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createRateLimiter, rateLimitedError } from "../src/limiter.ts";

/** Collects log lines, to check that the outage is reported loudly. */
class Lines extends Writable {
  readonly lines: string[] = [];
  override _write(chunk: Buffer, _enc: BufferEncoding, cb: () => void) {
    this.lines.push(chunk.toString("utf8"));
    cb();
  }
}

const limit = { rps: 0.001, burst: 3 };
const key = { tenantId: "t_outage", agentId: "agt_outage" };

// The documented behaviour (docs/rate-limit.md): fail open to per-replica in-memory buckets,
// without waiting on a dead Redis. The connection options are the runtime's own: with
// maxRetriesPerRequest null, ioredis alone would queue every command until Redis came back.
describe("Redis outage: fail open to per-replica buckets", () => {
  it("nothing listening: admits up to the local bucket, denies after it, logs once", async () => {
    const redis = new Redis("redis://127.0.0.1:1", {
      maxRetriesPerRequest: null,
      enableAutoPipelining: true,
    });
    redis.on("error", () => {});
    const logs = new Lines();
    const limiter = createRateLimiter({
      redis,
      logger: createLogger({ level: "info", service: "t", stream: logs }),
    });
    try {
      const results = [];
      for (let i = 0; i < 6; i++) results.push(await limiter.take(key, limit));
      expect(results.map((r) => r.allowed)).toEqual([true, true, true, false, false, false]);
      expect(results[5]).toEqual({ allowed: false, retryAfterSeconds: 60 });
      const outage = logs.lines.filter((l) => l.includes("Redis unavailable"));
      expect(outage).toHaveLength(1);
      expect(JSON.parse(outage[0] ?? "{}")).toMatchObject({ level: "error" });
    } finally {
      redis.disconnect();
    }
  });

  describe("Redis accepts connections but never answers", () => {
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

    it("every take still answers, from the local bucket", async () => {
      const address = server.address();
      if (!address || typeof address === "string") throw new Error("no port");
      const redis = new Redis(address.port, "127.0.0.1", {
        maxRetriesPerRequest: null,
        enableReadyCheck: false,
      });
      redis.on("error", () => {});
      const limiter = createRateLimiter({ redis, logger: createLogger({ level: "silent", service: "t" }) });
      try {
        const results = await Promise.all([...Array(5)].map(() => limiter.take(key, limit)));
        expect(results.filter((r) => r.allowed)).toHaveLength(3);
      } finally {
        redis.disconnect();
      }
    });
  });
});

describe("rateLimitedError", () => {
  it("is a 429 domain error with the spec's message and Retry-After", () => {
    const e = rateLimitedError(7);
    expect(e.kind).toBe("rate_limited");
    expect(e.message).toBe("rate limit exceeded");
    expect(e.headers).toEqual({ "Retry-After": "7" });
  });
});
