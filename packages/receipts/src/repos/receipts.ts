import { type Db, invocations, policyDecisions, type ReceiptRow, receipts } from "@gw/db";
import { and, desc, eq } from "drizzle-orm";

/** Receipt artifacts. Every function takes the tenant id: there is no unscoped read. */
export const receiptRepo = {
  /**
   * Stores a signed receipt and writes its id on the subject (invocation or decision) in one
   * transaction, so a `receipt_artifact_id` never names a receipt that does not exist.
   */
  async save(db: Db, tenantId: string, row: Omit<ReceiptRow, "tenantId">): Promise<void> {
    await db.transaction(async (tx) => {
      await tx.insert(receipts).values({ ...row, tenantId });
      if (row.action === "gateway.invocation") {
        await tx
          .update(invocations)
          .set({ receiptArtifactId: row.id })
          .where(and(eq(invocations.tenantId, tenantId), eq(invocations.id, row.subjectId)));
      } else {
        await tx
          .update(policyDecisions)
          .set({ receiptArtifactId: row.id })
          .where(and(eq(policyDecisions.tenantId, tenantId), eq(policyDecisions.id, row.subjectId)));
      }
    });
  },

  /** The newest receipt of a subject (one is emitted per subject; newest wins if ever more). */
  async forSubject(db: Db, tenantId: string, subjectId: string): Promise<ReceiptRow | undefined> {
    const [row] = await db
      .select()
      .from(receipts)
      .where(and(eq(receipts.tenantId, tenantId), eq(receipts.subjectId, subjectId)))
      .orderBy(desc(receipts.signedAt))
      .limit(1);
    return row;
  },
};
