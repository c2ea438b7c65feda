import type { Db, ReceiptRow } from "@gw/db";
import * as v from "valibot";
import { receiptRepo } from "./repos/receipts.ts";

/** GET /v1/invocations/{id}/receipt; the OpenAPI document is generated from it. */
export const ReceiptResource = v.object({
  invocation_id: v.string(),
  attested: v.boolean(),
  reason: v.optional(v.picklist(["receipts_disabled", "not_recorded"])),
  artifact_id: v.optional(v.string()),
  actor: v.optional(v.string()),
  signed_at: v.optional(v.pipe(v.string(), v.isoTimestamp())),
  jws: v.optional(v.string()),
});
/** GET /v1/receipts/jwks: the public key(s) receipts are signed with; `{"keys": []}` when off. */
export const JwksResource = v.object({
  keys: v.array(v.record(v.string(), v.unknown())),
});

/**
 * GET /v1/invocations/{id}/receipt. Without a stored receipt: `receipts_disabled` when no emitter
 * is attached, else `not_recorded` (emission is fail-open, so none may exist).
 */
export function receiptJson(
  invocationId: string,
  row: ReceiptRow | undefined,
  enabled: boolean,
): v.InferOutput<typeof ReceiptResource> {
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
