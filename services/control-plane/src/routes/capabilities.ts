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
    audit: true,
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
      json_body_max_bytes: LIMITS.jsonBodyMaxBytes,
      agent_event_max_bytes: LIMITS.agentEventMaxBytes,
      approval_arguments_max_bytes: LIMITS.approvalArgumentsMaxBytes,
      mcp_name_max_bytes: LIMITS.nameMaxBytes,
      tool_list_max_bytes: LIMITS.toolListMaxBytes,
      tool_name_max_bytes: LIMITS.toolNameMaxBytes,
      virtual_members_max: LIMITS.virtualMembersMax,
      virtual_member_answer_max_bytes: LIMITS.virtualMemberAnswerMaxBytes,
      credential_secret_max_bytes: LIMITS.credentialSecretMaxBytes,
      payment_header_max_chars: LIMITS.paymentHeaderMaxChars,
      oauth_token_response_max_bytes: LIMITS.oauthTokenResponseMaxBytes,
      facilitator_answer_max_bytes: LIMITS.facilitatorAnswerMaxBytes,
      classifier_answer_max_bytes: LIMITS.classifierAnswerMaxBytes,
    },
    posture: {
      // The embedded store on disk is as durable as a Postgres server, for this one process.
      store: deps.store.kind === "postgres" || deps.store.dataDir ? "postgres" : "memory",
      data_dir: deps.store.dataDir ?? null,
      kms_key_configured: deps.config.GW_KMS_KEY !== undefined,
      receipts_enabled: deps.features.receipts,
      receipt_actor: deps.features.receiptActor,
      settlement_orchestration: deps.features.settlement,
    },
  };
  app.get("/capabilities", (c) => c.json(body));
}
