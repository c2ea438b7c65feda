import type { Store } from "@gw/db";
import { heartbeat, retire } from "./repos/reliability.ts";

/** How often a process says it is alive, and after how long without a beat it counts as dead. */
export const HEARTBEAT_MS = 5_000;
export const DEAD_AFTER_MS = 30_000;

/**
 * Beats for this process (`gw_instances`) every HEARTBEAT_MS: the sweeper ends the open streaming
 * records of a process that stopped beating (docs/reliability.md). Returns the stop, which retires
 * the process (after its records were flushed).
 */
export function startHeartbeat(
  store: Pick<Store, "query">,
  id: string,
  service: string,
  everyMs = HEARTBEAT_MS,
): () => Promise<void> {
  const beat = () => heartbeat(store.query, id, service).catch(() => {});
  void beat();
  const timer = setInterval(beat, everyMs);
  timer.unref();
  return async () => {
    clearInterval(timer);
    await retire(store.query, id).catch(() => {});
  };
}
