import { getPriority, setPriority } from "node:os";
import { ConfigError } from "@gw/config";
import { createBaseApp, registerHealth } from "@gw/http";
import { boot, healthOf } from "@gw/runtime";
import { startWorker } from "./worker.ts";

const { rt, serve } = await boot({
  service: "worker",
  defaultPort: 8082,
  check: (config) => {
    if (!config.REDIS_URL)
      throw new ConfigError("invalid configuration: REDIS_URL is required by the worker");
  },
});
yieldToTheDataPlane(rt.config.GW_WORKER_NICE);
const worker = startWorker(rt);
// The worker serves no API: health and version only.
const health = createBaseApp({ logger: rt.logger, accessLog: false });
registerHealth(health, healthOf(rt));
await serve(health, () => worker.stop());

/**
 * Lowers this process's priority to `nice` (never raises it: a process may not without privilege).
 * On a host shared with a proxy, a caller waiting for its 202 or its stream comes before the
 * background run of a call already answered (GW_WORKER_NICE, docs/performance.md).
 */
function yieldToTheDataPlane(nice: number) {
  try {
    if (getPriority() < nice) setPriority(nice);
  } catch (e) {
    rt.logger.warn({ err: e instanceof Error ? e.message : String(e), nice }, "could not set GW_WORKER_NICE");
  }
}
