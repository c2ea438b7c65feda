import { shareSessionEnds } from "@gw/forward";
import { storedPolicies } from "@gw/policy";
import type { JobConsumer } from "@gw/queue";
import type { Runtime } from "@gw/runtime";
import { answerHooksOf, toolCatalogOf, toolSearchOf } from "@gw/tools";
import { startMaintenance } from "./maintenance.ts";
import { createOnLost, createProcessor } from "./processor.ts";
import { startReconciler } from "./reconciler.ts";

/** Starts consuming transactional jobs; `stop` drains the active ones. */
export function startWorker(rt: Runtime): { consumer: JobConsumer; stop: () => Promise<void> } {
  // The tool catalog learns from (and, under a tenant policy, filters) the tool lists it collects.
  const tools = toolCatalogOf(rt);
  const policies = storedPolicies({
    db: rt.store.db,
    cacheMs: rt.config.GW_POLICY_CACHE_MS,
    subscribe: (invalidate) =>
      rt.changes.subscribe((change) => {
        if (change.kind === "policy") invalidate(change.tenantId);
      }),
  });
  // A transactional older-client call verifies its virtual server session as the proxy does.
  shareSessionEnds(rt);
  const answerHooks = answerHooksOf(tools, policies.get, rt.dispatcher);
  const toolSearch = toolSearchOf({ catalog: tools, policyOf: policies.get });
  const consumer = rt.jobs.consume(createProcessor({ ...rt, answerHooks, toolSearch }), createOnLost(rt));
  const stopMaintenance = startMaintenance(rt);
  const stopReconciler = startReconciler(rt, rt.config.GW_RECONCILE_MS);
  return {
    consumer,
    stop: async () => {
      stopMaintenance();
      await stopReconciler();
      await consumer.close();
      await tools.drain();
      policies.close();
      tools.close();
    },
  };
}
