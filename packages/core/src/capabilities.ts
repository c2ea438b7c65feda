import * as v from "valibot";

const Int = v.pipe(v.number(), v.integer());

/**
 * GET /v1/capabilities (docs/interface.md, Identity and capabilities). The control plane types its answer
 * by this schema and the OpenAPI document is generated from it.
 */
export const CapabilitiesResource = v.object({
  surfaces: v.object({
    credentials: v.boolean(),
    proxy: v.boolean(),
    invocations: v.boolean(),
    analytics: v.boolean(),
    agent_events: v.boolean(),
    settlement: v.boolean(),
    policy: v.boolean(),
    receipts: v.boolean(),
    approvals: v.boolean(),
    audit: v.boolean(),
  }),
  verified_action_required: v.boolean(),
  limits: v.object({
    transact_max_body_bytes: Int,
    captured_body_max_bytes: Int,
    model_header_max_bytes: Int,
    bundle_max_bytes: Int,
    invocations_max_limit: Int,
    policy_decisions_max_limit: Int,
    analytics_max_range_days: Int,
    agent_event_max_range_days: Int,
    json_body_max_bytes: Int,
    agent_event_max_bytes: Int,
    approval_arguments_max_bytes: Int,
    mcp_name_max_bytes: Int,
    tool_list_max_bytes: Int,
    tool_name_max_bytes: Int,
    virtual_members_max: Int,
    virtual_member_answer_max_bytes: Int,
    credential_secret_max_bytes: Int,
    payment_header_max_chars: Int,
    oauth_token_response_max_bytes: Int,
    facilitator_answer_max_bytes: Int,
    classifier_answer_max_bytes: Int,
  }),
  posture: v.object({
    /** `postgres`: durable (Postgres, or the embedded store on disk); `memory`: lost on exit. */
    store: v.picklist(["memory", "postgres"]),
    /** The embedded store's data directory (GW_DATA_DIR) when it is on disk; null otherwise. */
    data_dir: v.nullable(v.string()),
    /** True only for a key the operator configured (GW_KMS_KEY); a key kept in the data directory is not. */
    kms_key_configured: v.boolean(),
    receipts_enabled: v.boolean(),
    receipt_actor: v.string(),
    settlement_orchestration: v.boolean(),
  }),
});
export type CapabilitiesJson = v.InferOutput<typeof CapabilitiesResource>;
