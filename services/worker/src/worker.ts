import type { JobConsumer } from "@gw/queue";
import type { Runtime } from "@gw/runtime";
import { startMaintenance } from "./maintenance.ts";
import { createOnLost, createProcessor } from "./processor.ts";
import { startReconciler } from "./reconciler.ts";

/** Starts consuming transactional jobs; `stop` drains the active ones. */
export function startWorker(rt: Runtime): { consumer: JobConsumer; stop: () => Promise<void> } {
  const consumer = rt.jobs.consume(createProcessor(rt), createOnLost(rt));
  const stopMaintenance = startMaintenance(rt);
  const stopReconciler = startReconciler(rt, rt.config.GW_RECONCILE_MS);
  return {
    consumer,
    stop: async () => {
      stopMaintenance();
      await stopReconciler();
      await consumer.close();
    },
  };
}
