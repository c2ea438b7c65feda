import { type Db, type ReceiptRow, receiptRepo } from "@gw/db";

/**
 * GET /v1/invocations/{id}/receipt. Without a stored receipt: `receipts_disabled` when no emitter
 * is attached, else `not_recorded` (emission is fail-open, so none may exist).
 */
export function receiptJson(invocationId: string, row: ReceiptRow | undefined, enabled: boolean) {
  if (!row) {
    return {
      invocation_id: invocationId,
      attested: false,
      reason: enabled ? "not_recorded" : "receipts_disabled",
    };
  }
  return {
    invocation_id: invocationId,
    attested: true,
    artifact_id: row.id,
    actor: row.actor,
    signed_at: row.signedAt.toISOString(),
    jws: row.jws,
  };
}

/** The stored receipt of an invocation or a decision, in the caller's tenant. */
export function receiptOf({ ctx, subjectId }: { ctx: { db: Db; tenantId: string }; subjectId: string }) {
  return receiptRepo.forSubject(ctx.db, ctx.tenantId, subjectId);
}
