import { type CapabilitiesJson, LIMITS } from "@gw/core";
import type { AppEnv } from "@gw/http";
import type { Runtime } from "@gw/runtime";
import type { Hono } from "hono";

export type Surfaces = CapabilitiesJson["surfaces"];

/**
 * Which route families this deployment mounts. A false value is the reason the family's routes
 * answer 404. Families not built yet report false rather than pretending.
 */
export function surfacesOf(deps: Pick<Runtime, "features">): Surfaces {
  return {
    credentials: deps.features.credentials,
    proxy: true,
    invocations: true,
    analytics: true,
    agent_events: true,
    settlement: true,
    policy: true,
    receipts: true,
    approvals: true,
  };
}

export function registerCapabilities(
  app: Hono<AppEnv>,
  deps: Pick<Runtime, "config" | "store" | "features">,
  surfaces: Surfaces,
) {
  // Built once: everything here is fixed for the life of the process.
  const body: CapabilitiesJson = {
    surfaces,
    verified_action_required: deps.features.verifier,
    limits: {
      transact_max_body_bytes: LIMITS.transactMaxBodyBytes,
      captured_body_max_bytes: LIMITS.capturedBodyMaxBytes,
      model_header_max_bytes: LIMITS.modelHeaderMaxBytes,
      bundle_max_bytes: LIMITS.bundleMaxBytes,
      invocations_max_limit: LIMITS.invocationsMaxLimit,
      policy_decisions_max_limit: LIMITS.policyDecisionsMaxLimit,
      analytics_max_range_days: LIMITS.analyticsMaxRangeDays,
      agent_event_max_range_days: LIMITS.agentEventMaxRangeDays,
    },
    posture: {
      store: deps.store.kind,
      kms_key_configured: deps.config.GW_KMS_KEY !== undefined,
      receipts_enabled: deps.features.receipts,
      receipt_actor: deps.features.receiptActor,
      settlement_orchestration: deps.features.settlement,
    },
  };
  app.get("/capabilities", (c) => c.json(body));
}
