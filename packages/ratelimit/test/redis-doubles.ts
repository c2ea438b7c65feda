import { Redis } from "ioredis";

/**
 * A connection of its own to the test's Redis whose script calls are counted (the server's command
 * statistics would also count every other suite sharing it), or answered `lateMs` late: a take or
 * charge decided through Redis is then still pending after the turn it started in.
 */
export function scriptRedis(url: string, lateMs = 0): { redis: Redis; sent: () => number } {
  const redis = new Redis(url, { maxRetriesPerRequest: null });
  let sent = 0;
  const evalsha = redis.evalsha.bind(redis) as (...a: unknown[]) => Promise<unknown>;
  Object.assign(redis, {
    evalsha: async (...a: unknown[]) => {
      sent++;
      const reply = await evalsha(...a);
      if (lateMs > 0) await new Promise((r) => setTimeout(r, lateMs));
      return reply;
    },
  });
  return { redis, sent: () => sent };
}
