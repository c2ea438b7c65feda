import type { Db } from "@gw/db";
import { CredentialError, type Keyring } from "./keyring.ts";
import { credentialRepo } from "./repos/credentials.ts";

export type RewrapReport = {
  /** Rows whose data key is now wrapped by `to`. */
  rewrapped: number;
  /** Rows wrapped by a KEK that is neither `from` nor `to`: left as they are. */
  unknownKek: string[];
  /** Rows whose wrapped key does not open under `from` (tampered or copied): left as they are. */
  failed: string[];
  /** Rows rotated by a caller while this ran: left to the next run (it finds them by kek_id). */
  raced: string[];
};

/**
 * Re-wraps every credential's data key from one KEK to another, in batches by id, touching only
 * `wrapped_key` and `kek_id`; ciphertexts stay as they are. Safe to re-run: rows already under `to`
 * are not read again. Operator action over all tenants (see docs/credentials.md).
 */
export async function rewrapAll({
  db,
  from,
  to,
  batchSize = 200,
}: {
  db: Db;
  from: Keyring;
  to: Keyring;
  batchSize?: number;
}): Promise<RewrapReport> {
  if (from.kekId === to.kekId) throw new Error("the old and the new key-encryption keys are the same");
  const report: RewrapReport = { rewrapped: 0, unknownKek: [], failed: [], raced: [] };
  let afterId = "";
  for (;;) {
    const batch = await credentialRepo.listForRewrap(db, {
      exceptKekId: to.kekId,
      afterId,
      limit: batchSize,
    });
    for (const row of batch) {
      const binding = { tenantId: row.tenantId, credentialId: row.id };
      let wrappedKey: Buffer;
      try {
        wrappedKey = from.rewrap(binding, row, to);
      } catch (e) {
        if (!(e instanceof CredentialError)) throw e;
        (e.reason === "unknown_kek" ? report.unknownKek : report.failed).push(row.id);
        continue;
      }
      const done = await credentialRepo.setWrappedKeyForRewrap(db, row.tenantId, row.id, row, {
        kekId: to.kekId,
        wrappedKey,
      });
      if (done) report.rewrapped++;
      else report.raced.push(row.id);
    }
    const last = batch.at(-1);
    if (!last || batch.length < batchSize) return report;
    afterId = last.id;
  }
}
