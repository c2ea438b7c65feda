import type { Runtime } from "./runtime.ts";

/**
 * Pings what the process depends on: the store, and Redis when used. Bounded: a dependency that
 * does not answer within 2 s is down (ioredis would otherwise queue the ping until it reconnects).
 */
export function healthOf(rt: Pick<Runtime, "store" | "redis" | "config">) {
  return {
    ping: () => {
      let timer: NodeJS.Timeout | undefined;
      const deadline = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error("health check timed out")), 2_000);
      });
      return Promise.race([Promise.all([rt.store.ping(), rt.redis?.ping()]), deadline]).finally(() =>
        clearTimeout(timer),
      );
    },
    version: rt.config.GW_VERSION,
    commit: rt.config.GW_COMMIT,
  };
}
