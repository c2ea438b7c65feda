import type { PolicyDecisionRow, PolicyRow } from "@gw/db";
import * as v from "valibot";
import { ACTIONS } from "./schema.ts";

const Time = v.pipe(v.string(), v.isoTimestamp());

/** GET /v1/policy; the OpenAPI document is generated from it (rules as PUT accepted them). */
export const PolicyResource = v.object({
  version: v.pipe(v.number(), v.integer()),
  default: v.optional(v.unknown()),
  on_error: v.optional(v.unknown()),
  rules: v.array(v.unknown()),
  /** The answer rules as PUT accepted them; left out when the document has none. */
  answer_rules: v.optional(v.array(v.unknown())),
  updated_at: v.optional(Time),
});
/** The answer of PUT /v1/policy. */
export const PolicyWritten = v.object({ version: v.pipe(v.number(), v.integer()), updated_at: Time });
/** A decision list item (docs/policy.md "Decisions"). */
export const PolicyDecisionResource = v.object({
  id: v.string(),
  agent_id: v.string(),
  protocol: v.string(),
  mcp_tool: v.nullable(v.string()),
  action: v.picklist(ACTIONS),
  matched_rule: v.string(),
  reason: v.string(),
  receipt_artifact_id: v.nullable(v.string()),
  created_at: Time,
});

/** A quota counter in its current window (docs/policy.md "Quotas"). */
export const QuotaUseResource = v.object({
  rule: v.string(),
  key: v.string(),
  used: v.pipe(v.number(), v.integer()),
  limit: v.pipe(v.number(), v.integer()),
  window_start: Time,
  resets_at: Time,
});

/** A quota counter as GET /v1/policy/quotas lists it (times in epoch milliseconds in the store). */
export function quotaUseJson(u: {
  rule: string;
  key: string;
  used: number;
  limit: number;
  windowStart: number;
  resetsAt: number;
}): v.InferOutput<typeof QuotaUseResource> {
  return {
    rule: u.rule,
    key: u.key,
    used: u.used,
    limit: u.limit,
    window_start: new Date(u.windowStart).toISOString(),
    resets_at: new Date(u.resetsAt).toISOString(),
  };
}

/**
 * GET /v1/policy: `{version: 0, rules: []}` when the tenant never had a document; after a delete,
 * `{version, rules: [], updated_at}` with the last version (no `default`: there is no document).
 */
export function policyJson(row: PolicyRow | undefined): v.InferOutput<typeof PolicyResource> {
  if (!row) return { version: 0, rules: [] };
  if (row.document === null) {
    return { version: row.version, rules: [], updated_at: row.updatedAt.toISOString() };
  }
  const doc = row.document as {
    default?: unknown;
    on_error?: unknown;
    rules?: unknown;
    answer_rules?: unknown;
  };
  const answerRules =
    Array.isArray(doc.answer_rules) && doc.answer_rules.length > 0 ? doc.answer_rules : null;
  return {
    version: row.version,
    default: doc.default,
    on_error: doc.on_error,
    rules: (doc.rules ?? []) as unknown[],
    ...(answerRules ? { answer_rules: answerRules } : {}),
    updated_at: row.updatedAt.toISOString(),
  };
}

/** A decision list item (docs/policy.md "Decisions"). */
export function decisionJson(row: PolicyDecisionRow): v.InferOutput<typeof PolicyDecisionResource> {
  return {
    id: row.id,
    agent_id: row.agentId,
    protocol: row.protocol,
    mcp_tool: row.mcpTool,
    action: row.action,
    matched_rule: row.matchedRule,
    reason: row.reason,
    receipt_artifact_id: row.receiptArtifactId,
    created_at: row.createdAt.toISOString(),
  };
}
