import type { Query } from "../client.ts";
import { coalesce } from "./coalesce.ts";
import type { InvocationResult, InvocationUpdate, NewInvocation } from "./invocations.ts";

type Update = { tenantId: string; id: string; set: InvocationUpdate; result?: InvocationResult | undefined };

export type InvocationWriter = {
  insert: (tenantId: string, row: NewInvocation) => Promise<void>;
  update: (
    tenantId: string,
    id: string,
    set: InvocationUpdate,
    result?: InvocationResult | undefined,
  ) => Promise<void>;
};

// Every value travels as text in a text[] and is cast in SQL: one constant statement text for any
// batch size (so it is prepared once per connection), and no driver-side array type guessing.
export const str = (v: unknown): string | null => {
  if (v === null || v === undefined) return null;
  if (v instanceof Date) return v.toISOString();
  if (Buffer.isBuffer(v)) return v.toString("hex");
  if (typeof v === "object") return JSON.stringify(v);
  return String(v);
};

const INSERT_COLS = [
  ["id", "text"],
  ["tenant_id", "text"],
  ["agent_id", "text"],
  ["mode", "text"],
  ["status", "text"],
  ["model", "text"],
  ["mcp_method", "text"],
  ["mcp_tool", "text"],
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

const DEFAULTS: Readonly<Record<string, string>> = {
  status: "'pending'",
  body_captured: "false",
  created_at: "now()",
};
const insertValue = (c: string, t: string) => {
  const v = t === "bytea" ? `decode(v.${c}, 'hex')` : `v.${c}::${t}`;
  return DEFAULTS[c] ? `coalesce(${v}, ${DEFAULTS[c]})` : v;
};

/** The invocation insert over unnested text arrays ($1..$INSERT_PARAMS); see `insertParams`. */
export const INSERT_SQL = `insert into invocations (${INSERT_COLS.map(([c]) => c).join(", ")})
select ${INSERT_COLS.map(([c, t]) => insertValue(c, t)).join(", ")}
from unnest(${INSERT_COLS.map((_, i) => `$${i + 1}::text[]`).join(", ")}) as v(${INSERT_COLS.map(([c]) => c).join(", ")})`;

export const INSERT_PARAMS = INSERT_COLS.length;

export function insertParams(
  items: ReadonlyArray<{ tenantId: string; row: NewInvocation }>,
): (string | null)[][] {
  const r = (x: { tenantId: string; row: NewInvocation }) => x.row;
  const cols: Array<(x: { tenantId: string; row: NewInvocation }) => unknown> = [
    (x) => r(x).id,
    (x) => x.tenantId,
    (x) => r(x).agentId,
    (x) => r(x).mode,
    (x) => r(x).status,
    (x) => r(x).model,
    (x) => r(x).mcpMethod,
    (x) => r(x).mcpTool,
    (x) => r(x).reqSize,
    (x) => r(x).startedAt,
    (x) => r(x).policyAction,
    (x) => r(x).policyMatchedRule,
    (x) => r(x).paymentNetwork,
    (x) => r(x).paymentAsset,
    (x) => r(x).paymentAmount,
    (x) => r(x).paymentPayer,
    (x) => r(x).paymentNonce,
    (x) => r(x).settlement,
    (x) => r(x).settlementStatus,
    (x) => r(x).instanceId,
    (x) => r(x).errorClass,
    (x) => r(x).upstreamStatus,
    (x) => r(x).latencyMs,
    (x) => r(x).ttftMs,
    (x) => r(x).respSize,
    (x) => r(x).completedAt,
    (x) => r(x).bodyCaptured,
    (x) => r(x).reqBody,
    (x) => r(x).respBody,
    (x) => r(x).createdAt,
  ];
  return cols.map((get) => items.map((x) => str(get(x))));
}

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

const cast = (expr: string, t: string) => (t === "bytea" ? `decode(${expr}, 'hex')` : `${expr}::${t}`);
const U = 2 + UPDATE_COLS.length; // id, tenant_id, then the columns

/**
 * One statement for a whole batch of completions: the polled results are inserted by a
 * data-modifying CTE (so a completion and its result commit together) and every invocation row is
 * updated from the unnested arrays. A column left unset keeps its value (completions only ever
 * move a column from null to a value).
 */
const UPDATE_SQL = `with r as (
  insert into invocation_results (${RESULT_COLS.map(([c]) => c).join(", ")})
  select ${RESULT_COLS.map(([c, t]) => cast(`r.${c}`, t)).join(", ")}
  from unnest(${RESULT_COLS.map((_, i) => `$${U + i + 1}::text[]`).join(", ")}) as r(${RESULT_COLS.map(([c]) => c).join(", ")})
  on conflict do nothing
)
update invocations as i set ${UPDATE_COLS.map(([c, t]) => `${c} = coalesce(${cast(`v.${c}`, t)}, i.${c})`).join(", ")}
from unnest(${Array.from({ length: U }, (_, i) => `$${i + 1}::text[]`).join(", ")}) as v(id, tenant_id, ${UPDATE_COLS.map(([c]) => c).join(", ")})
where i.id = v.id and i.tenant_id = v.tenant_id`;

function updateParams(items: readonly Update[]): (string | null)[][] {
  const cols: Array<(u: Update) => unknown> = [
    (u) => u.id,
    (u) => u.tenantId,
    (u) => u.set.status,
    (u) => u.set.errorClass,
    (u) => u.set.upstreamStatus,
    (u) => u.set.latencyMs,
    (u) => u.set.ttftMs,
    (u) => u.set.reqSize,
    (u) => u.set.respSize,
    (u) => u.set.attempts,
    (u) => u.set.startedAt,
    (u) => u.set.completedAt,
    (u) => u.set.bodyCaptured,
    (u) => u.set.reqBody,
    (u) => u.set.respBody,
    (u) => u.set.settlement,
    (u) => u.set.settlementStatus,
    (u) => u.set.receiptArtifactId,
  ];
  const withResult = items.filter((u) => u.result);
  const res: Array<(u: Update) => unknown> = [
    (u) => u.id,
    (u) => u.tenantId,
    (u) => u.result?.status,
    (u) => u.result?.contentType,
    (u) => u.result?.headers,
    (u) => u.result?.body,
    (u) => u.result?.expiresAt,
  ];
  return [
    ...cols.map((get) => items.map((u) => str(get(u)))),
    ...res.map((get) => withResult.map((u) => str(get(u)))),
  ];
}

/**
 * Invocation inserts and completions of the data plane: group-committed (see `coalesce`), written
 * as constant-text statements over unnested arrays (prepared once per connection, no query
 * builder on the hot path). Same rows and tenant scoping as `invocationRepo`.
 */
export function createInvocationWriter(query: Query, opts: { maxInFlight?: number; maxBatch?: number } = {}) {
  const o = { maxInFlight: opts.maxInFlight ?? 4, maxBatch: opts.maxBatch ?? 256 };
  const insert = coalesce<{ tenantId: string; row: NewInvocation }>(async (items) => {
    await query(INSERT_SQL, insertParams(items));
  }, o);
  const update = coalesce<Update>(async (items) => {
    await query(UPDATE_SQL, updateParams(items));
  }, o);
  return {
    insert: (tenantId, row) => insert({ tenantId, row }),
    update: (tenantId, id, set, result) => update({ tenantId, id, set, result }),
  } satisfies InvocationWriter;
}
