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

/** A sealed row's data key, wrapped by the KEK `kekId`: what a rewrap changes. */
export type WrappedKey = { wrappedKey: Buffer; kekId: string };

/**
 * A table of sealed rows, as the rewrap reads it: `next` the batch after the key `after` (rows not
 * under `exceptKekId`, in key order), `swap` the row's wrapped key only if it still holds the one
 * read (a row rotated meanwhile wins), `label` a row's name in the report (never a secret).
 */
export type SealedTable<R extends WrappedKey, K> = {
  next: (db: Db, exceptKekId: string, after: K | null, limit: number) => Promise<R[]>;
  key: (row: R) => K;
  binding: (row: R) => { tenantId: string; credentialId: string };
  swap: (db: Db, row: R, to: WrappedKey) => Promise<boolean>;
  label: (row: R) => string;
};

const credentialTable: SealedTable<WrappedKey & { id: string; tenantId: string }, string> = {
  next: (db, exceptKekId, after, limit) =>
    credentialRepo.listForRewrap(db, { exceptKekId, afterId: after ?? "", limit }),
  key: (row) => row.id,
  binding: (row) => ({ tenantId: row.tenantId, credentialId: row.id }),
  swap: (db, row, to) => credentialRepo.setWrappedKeyForRewrap(db, row.tenantId, row.id, row, to),
  label: (row) => row.id,
};

export type RewrapArgs = { db: Db; from: Keyring; to: Keyring; batchSize?: number };

/**
 * Re-wraps the data keys of every row of `tables` from one KEK to another, in batches by key,
 * touching only `wrapped_key` and `kek_id`; ciphertexts stay as they are. Safe to re-run: rows
 * already under `to` are not read again. Operator action over all tenants (docs/credentials.md).
 */
export async function rewrapTables<R extends WrappedKey, K>(
  tables: SealedTable<R, K>[],
  { db, from, to, batchSize = 200 }: RewrapArgs,
): Promise<RewrapReport> {
  if (from.kekId === to.kekId) throw new Error("the old and the new key-encryption keys are the same");
  const report: RewrapReport = { rewrapped: 0, unknownKek: [], failed: [], raced: [] };
  for (const table of tables) {
    let after: K | null = null;
    for (;;) {
      const batch = await table.next(db, to.kekId, after, batchSize);
      for (const row of batch) {
        let wrappedKey: Buffer;
        try {
          wrappedKey = from.rewrap(table.binding(row), row, to);
        } catch (e) {
          if (!(e instanceof CredentialError)) throw e;
          (e.reason === "unknown_kek" ? report.unknownKek : report.failed).push(table.label(row));
          continue;
        }
        if (await table.swap(db, row, { wrappedKey, kekId: to.kekId })) report.rewrapped++;
        else report.raced.push(table.label(row));
      }
      const last = batch.at(-1);
      if (!last || batch.length < batchSize) break;
      after = table.key(last);
    }
  }
  return report;
}

/** Re-wraps every credential's data key (`pnpm rotate-kek`). */
export function rewrapAll(args: RewrapArgs): Promise<RewrapReport> {
  return rewrapTables([credentialTable], args);
}
