import { type Audit, auditEventJson, auditedTransaction } from "@gw/audit";
import type { AppEnv } from "@gw/http";
import type { Runtime } from "@gw/runtime";
import { emitAuditRecord } from "@gw/telemetry";
import type { Context } from "hono";

type Db = Runtime["store"]["db"];

/**
 * Runs a control-plane write and its audit events in one transaction (docs/audit.md): the write
 * commits with its events or not at all. `fn` gets the transaction to hand the verb as its `db`.
 * After the commit each event is written to the log as one `audit` line (its fields; `changes`
 * never holds a secret's value), for collectors that read the gateway's logs, and emitted as
 * one OpenTelemetry log record (a no-op without an OTLP endpoint).
 */
export async function audited<T>(
  c: Context<AppEnv>,
  db: Db,
  fn: (tx: Db, audit: Audit) => Promise<T>,
): Promise<T> {
  const { tenantId, userId } = c.var.principal;
  const who = { tenantId, actor: userId };
  const { result, events } = await auditedTransaction(db, { ...who, requestId: c.var.requestId }, fn);
  for (const e of events) {
    const json = auditEventJson(e);
    c.var.log.info({ audit: json }, "audit");
    emitAuditRecord({
      "audit.id": json.id,
      "audit.tenant_id": json.tenant_id,
      "audit.actor": json.actor,
      "audit.action": json.action,
      "audit.resource_id": json.resource_id,
      "audit.request_id": json.request_id,
      "audit.created_at": json.created_at,
      "audit.changes": JSON.stringify(json.changes),
      "audit.digest": json.digest,
      "audit.prev_digest": json.prev_digest,
    });
  }
  return result;
}
