import { coalesce, type Query, RECORDED_FIELDS } from "@gw/db";
import { DECISIONS_CTE, type DecisionRecord, decisionsParam } from "./decision-rows.ts";
import { UPDATE_SQL, type Update, updateParams } from "./invocation-update.ts";
import type { InvocationResult, InvocationUpdate, NewInvocation } from "./invocations.ts";
import { json, jsonType, ms, opt, value } from "./row-json.ts";

export type InvocationWriter = {
  /** `set`: the outcome of a call whose record is written after it ended (wins over `row`). */
  insert: (
    tenantId: string,
    row: NewInvocation,
    set?: InvocationUpdate,
    decision?: DecisionRecord | undefined,
  ) => Promise<void>;
  update: (
    tenantId: string,
    id: string,
    set: InvocationUpdate,
    result?: InvocationResult | undefined,
  ) => Promise<void>;
};

const INSERT_COLS = [
  ["id", "text"],
  ["tenant_id", "text"],
  ["agent_id", "text"],
  ["mode", "text"],
  ["status", "text"],
  ["model", "text"],
  ["req_size", "int8"],
  ["started_at", "timestamptz"],
  ["policy_action", "text"],
  ["policy_matched_rule", "text"],
  ["payment_network", "text"],
  ["payment_asset", "text"],
  ["payment_amount", "text"],
  ["payment_payer", "text"],
  ["payment_nonce", "text"],
  ["settlement", "jsonb"],
  ["settlement_status", "text"],
  ["instance_id", "text"],
  ["created_by", "text"],
  ["routed_agent_id", "text"],
  ["answer_action", "text"],
  ["answer_findings", "jsonb"],
  // The protocols' recorded fields (schema/recorded.ts).
  ...RECORDED_FIELDS.map((f) => [f.name, f.type] as const),
  // A record written once its call already ended carries its outcome too (a quick stream).
  ["error_class", "text"],
  ["upstream_status", "int4"],
  ["latency_ms", "int8"],
  ["ttft_ms", "int8"],
  ["resp_size", "int8"],
  ["completed_at", "timestamptz"],
  ["body_captured", "boolean"],
  ["req_body", "bytea"],
  ["resp_body", "bytea"],
  // When the call was made, which a record written after the fact must not lose.
  ["created_at", "timestamptz"],
] as const;

/**
 * The open entry of each open row the statement inserts (ADR 0046): a row in `invocation_open`,
 * except for a transactional row whose stored request the same statement writes (that request is
 * its entry). Written by the statement itself, not a trigger (migration 0029): a completion
 * deletes it the same way (`UPDATE_SQL`, `FAIL_OPEN_SQL`).
 */
const openCte = (storesRequest: boolean) => `open_entries as (
  insert into invocation_open (invocation_id, tenant_id)
  select e.id, e.tenant_id from json_to_recordset($1::text::json) as e(id text, tenant_id text, mode text, completed_at int8)
  where e.completed_at is null${storesRequest ? " and e.mode <> 'transactional'" : ""}
  on conflict do nothing
)`;

const DEFAULTS: Readonly<Record<string, string>> = {
  status: "'pending'",
  body_captured: "false",
  created_at: "now()",
};
const insertValue = (c: string, t: string) => {
  const v = value(`v.${c}`, t);
  return DEFAULTS[c] ? `coalesce(${v}, ${DEFAULTS[c]})` : v;
};

/**
 * The invocation insert of a whole batch from one JSON array ($1; see `insertParams`), with the
 * policy decisions of its calls from a second ($2): one constant statement text for any batch size
 * (prepared once per connection), and the rows are serialized by `JSON.stringify` in one native
 * pass instead of thirty driver-escaped arrays. The parameters are declared text (`::text::json`):
 * typed json, the driver would encode the string again once the statement is prepared. `ctes` are
 * further data-modifying CTEs of the same statement (reservations, the stored request).
 */
export const insertSql = (
  o: { storesRequest: boolean },
  ...ctes: string[]
) => `with ${[...ctes, openCte(o.storesRequest), DECISIONS_CTE].join(", ")}
insert into invocations (${INSERT_COLS.map(([c]) => c).join(", ")})
select ${INSERT_COLS.map(([c, t]) => insertValue(c, t)).join(", ")}
from json_to_recordset($1::text::json) as v(${INSERT_COLS.map(([c, t]) => `${c} ${jsonType(t)}`).join(", ")})`;

export const INSERT_SQL = insertSql({ storesRequest: false });
/** The parameters of `insertSql` ($1, $2); its CTEs' own start at the next. */
export const INSERT_PARAMS = 2;

export type NewRow = {
  tenantId: string;
  row: NewInvocation;
  set?: InvocationUpdate | undefined;
  decision?: DecisionRecord | undefined;
};
const NO_UPDATE: InvocationUpdate = {};

/**
 * The recorded fields of a row written whole: what the request gave wins, unless the field is
 * learned from the answer only (then the outcome's value wins), as a completion would write it.
 */
function recordedInto(out: Record<string, unknown>, { row: r, set: u = NO_UPDATE }: NewRow) {
  for (const f of RECORDED_FIELDS) {
    const v = f.from === "answer" ? (u[f.key] ?? r[f.key]) : (r[f.key] ?? u[f.key]);
    if (v !== null && v !== undefined) out[f.name] = v;
  }
}

/**
 * The JSON of `INSERT_SQL` for a batch. A row written once its call already ended comes with its
 * outcome (`set`): a value given there wins over the row's (`set.x ?? row.x`), read field by field
 * instead of merged into a new object (a spread per call cost more than the rest of the row).
 */
export function insertParams(items: ReadonlyArray<NewRow>): [string, string] {
  const rows = items.map(({ tenantId, row: r, set: u = NO_UPDATE }) => ({
    id: r.id,
    tenant_id: tenantId,
    agent_id: r.agentId,
    mode: r.mode,
    status: opt(u.status ?? r.status),
    model: opt(u.model ?? r.model),
    req_size: opt(u.reqSize ?? r.reqSize),
    started_at: ms(u.startedAt ?? r.startedAt),
    policy_action: opt(u.policyAction ?? r.policyAction),
    policy_matched_rule: opt(u.policyMatchedRule ?? r.policyMatchedRule),
    payment_network: opt(u.paymentNetwork ?? r.paymentNetwork),
    payment_asset: opt(u.paymentAsset ?? r.paymentAsset),
    payment_amount: opt(u.paymentAmount ?? r.paymentAmount),
    payment_payer: opt(u.paymentPayer ?? r.paymentPayer),
    payment_nonce: opt(u.paymentNonce ?? r.paymentNonce),
    settlement: opt(u.settlement ?? r.settlement),
    settlement_status: opt(u.settlementStatus ?? r.settlementStatus),
    instance_id: opt(u.instanceId ?? r.instanceId),
    created_by: opt(r.createdBy),
    routed_agent_id: opt(u.routedAgentId ?? r.routedAgentId),
    answer_action: opt(u.answerAction ?? r.answerAction),
    answer_findings: opt(u.answerFindings ?? r.answerFindings),
    error_class: opt(u.errorClass ?? r.errorClass),
    upstream_status: opt(u.upstreamStatus ?? r.upstreamStatus),
    latency_ms: opt(u.latencyMs ?? r.latencyMs),
    ttft_ms: opt(u.ttftMs ?? r.ttftMs),
    resp_size: opt(u.respSize ?? r.respSize),
    completed_at: ms(u.completedAt ?? r.completedAt),
    body_captured: opt(u.bodyCaptured ?? r.bodyCaptured),
    req_body: json(u.reqBody ?? r.reqBody),
    resp_body: json(u.respBody ?? r.respBody),
    created_at: ms(u.createdAt ?? r.createdAt),
  }));
  for (let i = 0; i < items.length; i++) recordedInto(rows[i] as Record<string, unknown>, items[i] as NewRow);
  return [JSON.stringify(rows), decisionsParam(items)];
}

/**
 * Invocation inserts and completions of the data plane: group-committed (see `coalesce`), written
 * as constant-text statements over unnested arrays (prepared once per connection, no query
 * builder on the hot path). Same rows and tenant scoping as `invocationRepo`.
 */
export function createInvocationWriter(
  query: Query,
  opts: { maxInFlight?: number; maxBatch?: number; spacingMs?: number } = {},
) {
  const o = { maxInFlight: opts.maxInFlight ?? 4, maxBatch: opts.maxBatch ?? 256, spacingMs: opts.spacingMs };
  const insert = coalesce<NewRow>(async (items) => {
    await query(INSERT_SQL, insertParams(items));
  }, o);
  const update = coalesce<Update>(async (items) => {
    await query(UPDATE_SQL, updateParams(items));
  }, o);
  return {
    insert: (tenantId: string, row: NewInvocation, set?: InvocationUpdate, decision?: DecisionRecord) =>
      insert({ tenantId, row, set, decision }),
    update: (tenantId, id, set, result) => update({ tenantId, id, set, result }),
  } satisfies InvocationWriter;
}
