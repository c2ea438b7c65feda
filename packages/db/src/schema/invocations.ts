import { sql } from "drizzle-orm";
import {
  bigint,
  boolean,
  customType,
  index,
  integer,
  jsonb,
  type PgTextBuilderInitial,
  pgTable,
  text,
} from "drizzle-orm/pg-core";
import { tstz } from "./columns.ts";
import { RECORDED_FIELDS, type RecordedKey } from "./recorded.ts";

export const bytea = customType<{ data: Buffer; driverData: Buffer | Uint8Array }>({
  dataType: () => "bytea",
  fromDriver: (v) => (Buffer.isBuffer(v) ? v : Buffer.from(v)),
});

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

export const INVOCATION_STATUSES = ["pending", "running", "succeeded", "failed"] as const;
export const INVOCATION_MODES = ["transactional", "streaming"] as const;
export const ERROR_CLASSES = [
  "timeout",
  "upstream_5xx",
  "upstream_4xx",
  "ssrf_blocked",
  "credential_error",
  "cancelled",
  "internal",
] as const;
export type InvocationStatus = (typeof INVOCATION_STATUSES)[number];
export type InvocationMode = (typeof INVOCATION_MODES)[number];
export type ErrorClass = (typeof ERROR_CLASSES)[number];

const int64 = (name: string) => bigint(name, { mode: "number" });

/** The columns of the protocols' recorded fields (schema/recorded.ts): nullable text, each its own. */
const recordedColumns = () =>
  Object.fromEntries(RECORDED_FIELDS.map((f) => [f.key, text(f.name)])) as {
    [K in RecordedKey]: PgTextBuilderInitial<string, [string, ...string[]]>;
  };

export const invocations = pgTable(
  "invocations",
  {
    id: text("id").primaryKey(),
    tenantId: text("tenant_id").notNull(),
    agentId: text("agent_id").notNull(),
    mode: text("mode", { enum: INVOCATION_MODES }).notNull(),
    status: text("status", { enum: INVOCATION_STATUSES }).notNull().default("pending"),
    errorClass: text("error_class", { enum: ERROR_CLASSES }),
    model: text("model"),
    paymentNetwork: text("payment_network"),
    paymentAsset: text("payment_asset"),
    paymentAmount: text("payment_amount"),
    paymentPayer: text("payment_payer"),
    paymentNonce: text("payment_nonce"),
    policyAction: text("policy_action", { enum: ["allow", "warn"] }),
    policyMatchedRule: text("policy_matched_rule"),
    receiptArtifactId: text("receipt_artifact_id"),
    settlement: jsonb("settlement").$type<Settlement>(),
    /** Copy of settlement.status for the list filter. */
    settlementStatus: text("settlement_status"),
    upstreamStatus: integer("upstream_status"),
    latencyMs: int64("latency_ms"),
    ttftMs: int64("ttft_ms"),
    reqSize: int64("req_size"),
    respSize: int64("resp_size"),
    attempts: integer("attempts").notNull().default(0),
    bodyCaptured: boolean("body_captured").notNull().default(false),
    reqBody: bytea("req_body"),
    respBody: bytea("resp_body"),
    createdAt: tstz("created_at").notNull().defaultNow(),
    startedAt: tstz("started_at"),
    completedAt: tstz("completed_at"),
    /** The caller's `sub`: the poll shows the upstream's answer body to it (or to invocations:read_body). */
    createdBy: text("created_by"),
    /** The process that owns an open streaming record (gw_instances); the sweeper ends it if that process died. */
    instanceId: text("instance_id"),
    /** A virtual MCP server's call: the member agent that served it (null for a fan-out). */
    routedAgentId: text("routed_agent_id"),
    /** What the answer rules did to the answer: redacted, blocked, warned; null when nothing. */
    answerAction: text("answer_action").$type<"redacted" | "blocked" | "warned">(),
    /** The acting answer rule's findings, kind → count (never the matched text). */
    answerFindings: jsonb("answer_findings").$type<Record<string, number>>(),
    ...recordedColumns(),
  },
  (t) => [
    index("invocations_tenant_created_idx").on(t.tenantId, t.createdAt.desc(), t.id.desc()),
    index("invocations_tenant_agent_created_idx").on(t.tenantId, t.agentId, t.createdAt.desc()),
    // No index reads status or completed_at, the columns a completion changes: the completion is a
    // HOT update. Open rows are found through invocation_open instead (reliability.ts, ADR 0046).
    // A recorded field a list filter matches: its rows in order, partial on the rows that have it
    // (migrations 0019, 0025; ADR 0042). The A2A task's is also its invocations in order.
    ...RECORDED_FIELDS.filter((f) => f.filter).map((f) =>
      index(`invocations_${f.name}_idx`)
        .on(t.tenantId, t[f.key], t.createdAt)
        .where(sql`${t[f.key]} is not null`),
    ),
  ],
);

/**
 * The upstream answer of a transactional invocation, kept for polling for GW_RESULT_TTL_SECONDS and
 * then purged; the invocation record itself stays.
 */
export const invocationResults = pgTable(
  "invocation_results",
  {
    invocationId: text("invocation_id").primaryKey(),
    tenantId: text("tenant_id").notNull(),
    status: integer("status").notNull(),
    contentType: text("content_type"),
    /** Upstream response headers the poll returns besides content-type (names lower-case). */
    headers: jsonb("headers").$type<Record<string, string>>(),
    body: bytea("body").notNull(),
    expiresAt: tstz("expires_at").notNull(),
  },
  (t) => [index("invocation_results_expires_idx").on(t.expiresAt)],
);

export type InvocationRow = typeof invocations.$inferSelect;
