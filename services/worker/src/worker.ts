import type { JobConsumer } from "@gw/queue";
import type { Runtime } from "@gw/runtime";
import { startMaintenance } from "./maintenance.ts";
import { createOnLost, createProcessor } from "./processor.ts";

/** Starts consuming transactional jobs; `stop` drains the active ones. */
export function startWorker(rt: Runtime): { consumer: JobConsumer; stop: () => Promise<void> } {
  const consumer = rt.jobs.consume(createProcessor(rt), createOnLost(rt));
  const stopMaintenance = startMaintenance(rt);
  return {
    consumer,
    stop: async () => {
      stopMaintenance();
      await consumer.close();
    },
  };
}
