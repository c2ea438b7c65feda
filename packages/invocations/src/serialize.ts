import {
  ERROR_CLASSES,
  INVOCATION_MODES,
  INVOCATION_STATUSES,
  type InvocationRow,
  RECORDED_FIELDS,
  type RecordedName,
} from "@gw/db";
import * as v from "valibot";
import type { InvocationResult } from "./repos/invocations.ts";
import type { InvocationItemRow } from "./repos/poll.ts";

const iso = (d: Date | null) => (d ? d.toISOString() : null);

const Time = v.pipe(v.string(), v.isoTimestamp());
const Int = v.pipe(v.number(), v.integer());
const NullableString = v.nullable(v.string());
const NullableInt = v.nullable(Int);
const Base64 = v.pipe(v.string(), v.base64());

/** The settlement object inside an invocation (docs/interface.md, Invocation). */
export const SettlementResource = v.object({
  status: v.picklist(["pending", "settled", "settlement_failed", "settled_upstream_failed"]),
  tx_hash: v.optional(v.string()),
  settled_amount: v.optional(v.string()),
  operator_amount: v.optional(v.string()),
  facilitator_fee: v.optional(v.string()),
  attempts: v.optional(Int),
  reason: v.optional(v.string()),
  settled_at: v.optional(Time),
});

/** One nullable string per recorded field (the only type declared so far). */
function recordedEntries() {
  return Object.fromEntries(RECORDED_FIELDS.map((f) => [f.name, NullableString])) as {
    [K in RecordedName]: typeof NullableString;
  };
}

/**
 * The invocation list item (docs/interface.md, Invocation). The OpenAPI document is generated from these schemas and
 * the serializers below are typed by them, so document and answers cannot drift apart.
 */
export const InvocationItem = v.object({
  id: v.pipe(v.string(), v.regex(/^inv_[0-9a-f-]{36}$/)),
  agent_id: v.string(),
  mode: v.picklist(INVOCATION_MODES),
  status: v.picklist(INVOCATION_STATUSES),
  error_class: v.nullable(v.picklist(ERROR_CLASSES)),
  model: NullableString,
  payment_network: NullableString,
  payment_asset: NullableString,
  payment_amount: NullableString,
  payment_payer: NullableString,
  payment_nonce: NullableString,
  policy_action: v.nullable(v.picklist(["allow", "warn"])),
  receipt_artifact_id: NullableString,
  policy_matched_rule: NullableString,
  settlement: v.optional(SettlementResource),
  upstream_status: NullableInt,
  latency_ms: NullableInt,
  ttft_ms: NullableInt,
  req_size: NullableInt,
  resp_size: NullableInt,
  created_at: Time,
  completed_at: v.nullable(Time),
  /** A virtual MCP server's call: the member agent that served it (null for a fan-out or any other call). */
  routed_agent_id: NullableString,
  /** What the answer rules did to the answer (docs/policy.md "Answer guardrails"); null: nothing. */
  answer_action: v.nullable(v.picklist(["redacted", "blocked", "warned"])),
  /** The acting answer rule's findings: kind → count, never the matched text; null: none. */
  answer_findings: v.nullable(v.record(v.string(), Int)),
  /** The protocols' recorded fields (schema/recorded.ts in packages/db): null for a call of any other protocol. */
  ...recordedEntries(),
});
export type InvocationItemJson = v.InferOutput<typeof InvocationItem>;

/** The single-record read: bodies only when captured and the token holds invocations:read_body. */
export const InvocationDetail = v.object({
  ...InvocationItem.entries,
  body_captured: v.boolean(),
  req_body: v.optional(Base64),
  resp_body: v.optional(Base64),
});
export type InvocationDetailJson = v.InferOutput<typeof InvocationDetail>;

/** The poll answer: the list item plus, once terminal with an upstream answer, that answer. */
export const PollResult = v.object({
  ...InvocationItem.entries,
  response: v.optional(
    v.object({
      status: Int,
      headers: v.record(v.string(), v.string()),
      /** Present only for the caller that made the call or a holder of invocations:read_body. */
      body_b64: v.optional(Base64),
    }),
  ),
});
export type PollResultJson = v.InferOutput<typeof PollResult>;

/** The 202 of the transactional proxy path. */
export const Accepted = v.object({ invocation_id: v.pipe(v.string(), v.regex(/^inv_[0-9a-f-]{36}$/)) });

/** The invocation list item (docs/interface.md, Invocation). Bodies never appear here. */
export function invocationJson(row: InvocationItemRow): InvocationItemJson {
  const out: Omit<InvocationItemJson, RecordedName> = {
    id: row.id,
    agent_id: row.agentId,
    mode: row.mode,
    status: row.status,
    error_class: row.errorClass,
    model: row.model,
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
    routed_agent_id: row.routedAgentId,
    answer_action: row.answerAction,
    answer_findings: row.answerFindings,
  };
  const item = out as InvocationItemJson;
  for (const f of RECORDED_FIELDS) item[f.name] = row[f.key];
  return item;
}

/** The single-record read: the list item plus the body-capture fields. */
export function invocationDetailJson(
  row: InvocationRow,
  opts: { canReadBodies: boolean },
): InvocationDetailJson {
  const base = { ...invocationJson(row), body_captured: row.bodyCaptured };
  if (!row.bodyCaptured || !opts.canReadBodies) return base;
  return {
    ...base,
    ...(row.reqBody ? { req_body: row.reqBody.toString("base64") } : {}),
    ...(row.respBody ? { resp_body: row.respBody.toString("base64") } : {}),
  };
}

/**
 * The poll answer: the list item plus, once there is an upstream answer, the response (its body
 * only when `canReadBody`, see `canReadPolledBody`). `headers`
 * holds content-type (docs/interface.md, Proxy) and, as an addition, the upstream's mcp-session-id and
 * mcp-protocol-version when it sent them (docs/mcp.md).
 */
export function pollJson(
  row: InvocationItemRow,
  result: InvocationResult | undefined,
  opts: { canReadBody: boolean },
): PollResultJson {
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
      ...(opts.canReadBody ? { body_b64: result.body.toString("base64") } : {}),
    },
  };
}
