import { type InvocationRow, type Query, RECORDED_FIELDS } from "@gw/db";
import type { InvocationResult } from "./invocations.ts";
import { statusSql } from "./run-state.ts";

/** The fields of an invocation its list item and its poll answer show (no bodies, no internals). */
export type InvocationItemRow = Omit<
  InvocationRow,
  | "tenantId"
  | "attempts"
  | "bodyCaptured"
  | "reqBody"
  | "respBody"
  | "startedAt"
  | "instanceId"
  | "settlementStatus"
  | "createdBy"
>;

// One prepared statement for the poll path: the row and, once terminal, its result. Clients poll
// at least once per transactional call, so this read is as hot as the 202 (docs/performance.md).
const POLL_SQL = `select i.id, i.agent_id, i.mode, ${statusSql("i.")} as status, i.error_class, i.model,
  i.payment_network, i.payment_asset, i.payment_amount, i.payment_payer, i.payment_nonce,
  i.policy_action, i.receipt_artifact_id, i.policy_matched_rule, i.settlement, i.upstream_status,
  i.latency_ms, i.ttft_ms, i.req_size, i.resp_size, i.created_at, i.completed_at,
  i.routed_agent_id, i.answer_action, i.answer_findings, ${RECORDED_FIELDS.map((f) => `i.${f.name}`).join(", ")},
  r.status as r_status, r.content_type as r_content_type, r.headers as r_headers, r.body as r_body,
  r.expires_at as r_expires_at, i.created_by
from invocations i
left join invocation_results r on r.invocation_id = i.id and r.tenant_id = i.tenant_id
  and i.status in ('succeeded', 'failed')
where i.tenant_id = $1 and i.id = $2`;

const num = (v: unknown): number | null => (v === null || v === undefined ? null : Number(v));
const date = (v: unknown): Date => (v instanceof Date ? v : new Date(String(v)));
const str = (v: unknown): string | null => (v === null || v === undefined ? null : String(v));

/** A polled invocation: its list item, the caller that made it (`sub`), and its kept answer. */
export type PolledInvocation = {
  row: InvocationItemRow;
  createdBy: string | null;
  result: InvocationResult | undefined;
};

/** An invocation of the tenant and, when it is terminal and its answer is kept, that answer. */
export async function pollRow(
  query: Query,
  tenantId: string,
  id: string,
): Promise<PolledInvocation | undefined> {
  const [r] = await query(POLL_SQL, [tenantId, id]);
  if (!r) return undefined;
  const row = {
    id: String(r.id),
    agentId: String(r.agent_id),
    mode: r.mode,
    status: r.status,
    errorClass: r.error_class,
    model: str(r.model),
    paymentNetwork: str(r.payment_network),
    paymentAsset: str(r.payment_asset),
    paymentAmount: str(r.payment_amount),
    paymentPayer: str(r.payment_payer),
    paymentNonce: str(r.payment_nonce),
    policyAction: r.policy_action,
    receiptArtifactId: str(r.receipt_artifact_id),
    policyMatchedRule: str(r.policy_matched_rule),
    settlement: r.settlement ?? null,
    upstreamStatus: num(r.upstream_status),
    latencyMs: num(r.latency_ms),
    ttftMs: num(r.ttft_ms),
    reqSize: num(r.req_size),
    respSize: num(r.resp_size),
    createdAt: date(r.created_at),
    routedAgentId: str(r.routed_agent_id),
    answerAction: r.answer_action ?? null,
    answerFindings: r.answer_findings ?? null,
    completedAt: r.completed_at === null || r.completed_at === undefined ? null : date(r.completed_at),
  } as InvocationItemRow;
  for (const f of RECORDED_FIELDS) row[f.key] = str(r[f.name]);
  const createdBy = str(r.created_by);
  if (r.r_status === null || r.r_status === undefined) return { row, createdBy, result: undefined };
  const body = r.r_body as Buffer | Uint8Array;
  return {
    row,
    createdBy,
    result: {
      status: Number(r.r_status),
      contentType: str(r.r_content_type),
      headers: (r.r_headers ?? null) as Record<string, string> | null,
      body: Buffer.isBuffer(body) ? body : Buffer.from(body),
      expiresAt: date(r.r_expires_at),
    },
  };
}
