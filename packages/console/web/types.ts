// Shapes of the API resources the console reads (DESIGN.md §3). Written by hand for now; when the
// typed client (@gw/client, generated from /openapi.json) exists, these become re-exports of its
// component schemas and api.ts swaps to openapi-fetch without the screens changing.

export type List<T> = { data: T[]; limit: number; offset: number; total: number };
export type ApiErrorBody = { error: string };

export type Me = {
  tenant_id: string;
  user_id: string;
  scopes: string[];
  can_read_invocation_bodies: boolean;
};

export type Surfaces = {
  credentials: boolean;
  proxy: boolean;
  invocations: boolean;
  analytics: boolean;
  agent_events: boolean;
  settlement: boolean;
  policy: boolean;
  receipts: boolean;
};

export type Capabilities = {
  surfaces: Surfaces;
  verified_action_required: boolean;
  limits: Record<string, number>;
  posture: {
    store: string;
    kms_key_configured: boolean;
    receipts_enabled: boolean;
    receipt_actor: string;
    settlement_orchestration: boolean;
  };
};

export type Price = {
  amount: string;
  asset: "USDC";
  network: "base" | "base-sepolia";
  pay_to: string;
  tools?: Record<string, string>;
};

export type RateLimit = { rps: number; burst: number };

export type Agent = {
  id: string;
  name: string;
  description: string | null;
  upstream_url: string | null;
  protocol: "http" | "mcp";
  mcp_transport: string | null;
  mcp_protocol_version: string | null;
  credential_ref: string | null;
  price: Price | null;
  status: "active" | "inactive";
  suspended: boolean;
  rate_limit: RateLimit | null;
  max_concurrency: number | null;
  capture_bodies: boolean;
  emit_receipts: boolean;
  created_by: string;
  created_at: string;
  updated_at: string;
};

export type Credential = {
  id: string;
  name: string;
  kind: "bearer" | "api_key";
  header_name: string | null;
  hint: string;
  version: number;
  allowed_hosts?: string[] | null;
  created_at: string;
  updated_at: string;
};

export type Settlement = {
  status: "pending" | "settled" | "settlement_failed" | "settled_upstream_failed";
  tx_hash?: string;
  settled_amount?: string;
  operator_amount?: string;
  facilitator_fee?: string;
  attempts?: number;
  reason?: string;
  settled_at?: string;
};

export type Invocation = {
  id: string;
  agent_id: string;
  mode: "transactional" | "streaming";
  status: "pending" | "running" | "succeeded" | "failed";
  error_class: string | null;
  model: string | null;
  mcp_method: string | null;
  mcp_tool: string | null;
  payment_network: string | null;
  payment_asset: string | null;
  payment_amount: string | null;
  payment_payer: string | null;
  payment_nonce: string | null;
  policy_action: "allow" | "warn" | null;
  policy_matched_rule: string | null;
  receipt_artifact_id: string | null;
  settlement?: Settlement;
  upstream_status: number | null;
  latency_ms: number | null;
  ttft_ms: number | null;
  req_size: number | null;
  resp_size: number | null;
  created_at: string;
  completed_at: string | null;
};

export type InvocationDetail = Invocation & { body_captured: boolean; req_body?: string; resp_body?: string };

export type PollResult = Invocation & {
  response?: { status: number; headers: Record<string, string>; body_b64?: string };
};

export type Receipt = {
  invocation_id: string;
  attested: boolean;
  reason?: string;
  artifact_id?: string;
  actor?: string;
  signed_at?: string;
  jws?: string;
};

export type PolicyDocument = {
  version: number;
  default?: string;
  on_error?: string;
  rules: unknown[];
  updated_at?: string;
};

export type PolicyDecision = {
  id: string;
  agent_id: string;
  protocol: string;
  mcp_tool: string | null;
  action: "allow" | "warn" | "deny";
  matched_rule: string;
  reason: string | null;
  receipt_artifact_id: string | null;
  created_at: string;
};

export type SettlementConfig = {
  facilitator_url: string;
  facilitator_credential_ref: string | null;
  updated_at: string;
};

export type AnalyticsRow = {
  agent_id: string;
  bucket_start: string;
  invocations: number;
  succeeded: number;
  failed: number;
  latency_ms_p50: number | null;
  latency_ms_p95: number | null;
  latency_ms_p99: number | null;
  req_bytes: number;
  resp_bytes: number;
  settled_amount: string;
};

export type ActivitySummary = {
  schema: string;
  agent_id: string;
  since: string;
  until: string;
  summary: {
    sessions: number;
    tool_calls: number;
    tools_succeeded: number;
    tools_failed: number;
    tool_duration_ms: number;
    input_tokens: number;
    output_tokens: number;
    cost_usd: number;
    cost_known: boolean;
    last_event_at?: string;
  };
};
