import { RECORDED_FIELDS } from "@gw/db";
import type { InvocationResult, InvocationUpdate } from "./invocations.ts";
import { json, jsonType, ms, value } from "./row-json.ts";

/** One completion of a batch: the terminal state of a row, with the polled result it stores. */
export type Update = {
  tenantId: string;
  id: string;
  set: InvocationUpdate;
  result?: InvocationResult | undefined;
};

const ANSWER_FIELDS = RECORDED_FIELDS.filter((f) => f.from !== "request");
const UPDATE_COLS = [
  ["status", "text"],
  ["error_class", "text"],
  ["upstream_status", "int4"],
  ["latency_ms", "int8"],
  ["ttft_ms", "int8"],
  ["req_size", "int8"],
  ["resp_size", "int8"],
  ["attempts", "int4"],
  ["started_at", "timestamptz"],
  ["completed_at", "timestamptz"],
  ["body_captured", "boolean"],
  ["req_body", "bytea"],
  ["resp_body", "bytea"],
  ["settlement", "jsonb"],
  ["settlement_status", "text"],
  ["receipt_artifact_id", "text"],
  ["routed_agent_id", "text"],
  ["answer_action", "text"],
  ["answer_findings", "jsonb"],
  // A completion writes what the answer taught (a field learned from the request alone is never rewritten).
  ...ANSWER_FIELDS.map((f) => [f.name, f.type] as const),
] as const;
const RESULT_COLS = [
  ["invocation_id", "text"],
  ["tenant_id", "text"],
  ["status", "int4"],
  ["content_type", "text"],
  ["headers", "jsonb"],
  ["body", "bytea"],
  ["expires_at", "timestamptz"],
] as const;

/** Columns a completion fills only when still null: the request's value wins over the answer's (an A2A task). */
const KEEP_FIRST: ReadonlySet<string> = new Set(
  RECORDED_FIELDS.filter((f) => f.from === "request-or-answer").map((f) => f.name),
);

const cols = (list: ReadonlyArray<readonly [string, string]>) =>
  list.map(([c, t]) => `${c} ${jsonType(t)}`).join(", ");

/**
 * The open entries (ADR 0046) of the rows a statement ended, from its CTE `ended` (id, mode,
 * completed_at): a transactional call's stored request and any row's `invocation_open` entry go in
 * the same statement as the completion (migration 0029: no trigger).
 */
export const CLOSE_ENTRIES_CTES = `closed_requests as (
  delete from invocation_requests q using ended e
  where q.invocation_id = e.id and e.mode = 'transactional' and e.completed_at is not null
), closed_entries as (
  delete from invocation_open x using ended e where x.invocation_id = e.id and e.completed_at is not null
)`;

/**
 * One statement for a whole batch of completions, from two JSON arrays ($1 the updates, $2 the
 * polled results): the results are inserted by a data-modifying CTE (so a completion and its
 * result commit together), every invocation row is updated, and the open entries of the rows it
 * ended are deleted. A column left unset keeps its value (completions only ever move a column
 * from null to a value).
 */
export const UPDATE_SQL = `with r as (
  insert into invocation_results (${RESULT_COLS.map(([c]) => c).join(", ")})
  select ${RESULT_COLS.map(([c, t]) => value(`r.${c}`, t)).join(", ")}
  from json_to_recordset($2::text::json) as r(${cols(RESULT_COLS)})
  on conflict do nothing
), ended as (
  update invocations as i set ${UPDATE_COLS.map(([c, t]) => (KEEP_FIRST.has(c) ? `${c} = coalesce(i.${c}, ${value(`v.${c}`, t)})` : `${c} = coalesce(${value(`v.${c}`, t)}, i.${c})`)).join(", ")}
  from json_to_recordset($1::text::json) as v(id text, tenant_id text, ${cols(UPDATE_COLS)})
  where i.id = v.id and i.tenant_id = v.tenant_id
  returning i.id, i.mode, i.completed_at
), ${CLOSE_ENTRIES_CTES}
select count(*)::int as n from ended`;

export function updateParams(items: readonly Update[]): [string, string] {
  const updates = items.map(({ id, tenantId, set: u }) => ({
    id,
    tenant_id: tenantId,
    status: u.status,
    error_class: u.errorClass,
    upstream_status: u.upstreamStatus,
    latency_ms: u.latencyMs,
    ttft_ms: u.ttftMs,
    req_size: u.reqSize,
    resp_size: u.respSize,
    attempts: u.attempts,
    started_at: ms(u.startedAt),
    completed_at: ms(u.completedAt),
    body_captured: u.bodyCaptured,
    req_body: json(u.reqBody),
    resp_body: json(u.respBody),
    settlement: u.settlement,
    settlement_status: u.settlementStatus,
    receipt_artifact_id: u.receiptArtifactId,
    routed_agent_id: u.routedAgentId,
    answer_action: u.answerAction,
    answer_findings: u.answerFindings,
  }));
  for (let i = 0; i < items.length; i++) {
    const out = updates[i] as Record<string, unknown>;
    const u = (items[i] as Update).set;
    for (const f of ANSWER_FIELDS) out[f.name] = u[f.key];
  }
  const results = items.flatMap(({ id, tenantId, result: r }) =>
    r
      ? [
          {
            invocation_id: id,
            tenant_id: tenantId,
            status: r.status,
            content_type: r.contentType,
            headers: r.headers,
            body: json(r.body),
            expires_at: ms(r.expiresAt),
          },
        ]
      : [],
  );
  return [JSON.stringify(updates), JSON.stringify(results)];
}
