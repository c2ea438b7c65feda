import { purgeExpiredResults } from "@gw/invocations";
import type { Runtime } from "@gw/runtime";

/**
 * Periodic upkeep every worker runs (idempotent, so replicas may overlap): purge polled results
 * past their TTL.
 */
export function startMaintenance(deps: Pick<Runtime, "store" | "logger">, everyMs = 60_000): () => void {
  const tick = async () => {
    try {
      const purged = await purgeExpiredResults(deps.store.db, new Date());
      if (purged) deps.logger.info({ purged }, "expired invocation results purged");
    } catch (e) {
      deps.logger.warn({ err: e instanceof Error ? e.name : "error" }, "maintenance failed");
    }
  };
  const timer = setInterval(tick, everyMs);
  timer.unref();
  return () => clearInterval(timer);
}
