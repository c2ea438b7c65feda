import type { InvocationResult, InvocationRow } from "@gw/db";

const iso = (d: Date | null) => (d ? d.toISOString() : null);

/** The invocation list item (spec §2.3). Bodies never appear here. */
export function invocationJson(row: InvocationRow) {
  return {
    id: row.id,
    agent_id: row.agentId,
    mode: row.mode,
    status: row.status,
    error_class: row.errorClass,
    model: row.model,
    mcp_method: row.mcpMethod,
    mcp_tool: row.mcpTool,
    payment_network: row.paymentNetwork,
    payment_asset: row.paymentAsset,
    payment_amount: row.paymentAmount,
    payment_payer: row.paymentPayer,
    payment_nonce: row.paymentNonce,
    policy_action: row.policyAction,
    receipt_artifact_id: row.receiptArtifactId,
    policy_matched_rule: row.policyAction === null ? null : row.policyMatchedRule,
    ...(row.settlement ? { settlement: row.settlement } : {}),
    upstream_status: row.upstreamStatus,
    latency_ms: row.latencyMs,
    ttft_ms: row.ttftMs,
    req_size: row.reqSize,
    resp_size: row.respSize,
    created_at: row.createdAt.toISOString(),
    completed_at: iso(row.completedAt),
  };
}

/** The single-record read: the list item plus the body-capture fields. */
export function invocationDetailJson(row: InvocationRow, opts: { canReadBodies: boolean }) {
  const base = { ...invocationJson(row), body_captured: row.bodyCaptured };
  if (!row.bodyCaptured || !opts.canReadBodies) return base;
  return {
    ...base,
    ...(row.reqBody ? { req_body: row.reqBody.toString("base64") } : {}),
    ...(row.respBody ? { resp_body: row.respBody.toString("base64") } : {}),
  };
}

/**
 * The poll answer: the list item plus, once there is an upstream answer, the response. `headers`
 * holds content-type (DESIGN.md) and, as an addition, the upstream's mcp-session-id and
 * mcp-protocol-version when it sent them (docs/mcp.md).
 */
export function pollJson(row: InvocationRow, result: InvocationResult | undefined) {
  const base = invocationJson(row);
  if (!result || (row.status !== "succeeded" && row.status !== "failed")) return base;
  return {
    ...base,
    response: {
      status: result.status,
      headers: {
        ...(result.contentType ? { "content-type": result.contentType } : {}),
        ...result.headers,
      },
      body_b64: result.body.toString("base64"),
    },
  };
}
