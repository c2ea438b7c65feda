import { connectionHandoffs, connectionStates, connections, type Db } from "@gw/db";
import { and, asc, eq, gt, ne, sql } from "drizzle-orm";
import { CredentialError, type Keyring } from "../keyring.ts";
import type { RewrapReport } from "../rewrap.ts";
import type { Owner } from "./repo.ts";
import { grantBinding, verifierBinding } from "./tokens.ts";

type Row = Owner & { wrappedKey: Buffer; kekId: string };

/**
 * The sealed rows of connections (docs/connections.md), each a table of its own: people's grants,
 * connects in progress (their PKCE verifier) and connects waiting for the console (their grant).
 * `id` names a row in the report (never a token); `next` reads the next batch after `after`.
 */
type Table = {
  name: string;
  binding: (o: Owner) => { tenantId: string; credentialId: string };
  next: (
    db: Db,
    exceptKekId: string,
    after: string[] | null,
    limit: number,
  ) => Promise<Array<Row & { key: string[] }>>;
  swap: (
    db: Db,
    row: Row & { key: string[] },
    from: Row,
    to: { wrappedKey: Buffer; kekId: string },
  ) => Promise<boolean>;
};

const grants: Table = {
  name: "connection",
  binding: grantBinding,
  next: async (db, exceptKekId, after, limit) => {
    const rows = await db
      .select({
        tenantId: connections.tenantId,
        sub: connections.sub,
        credentialId: connections.credentialId,
        wrappedKey: connections.wrappedKey,
        kekId: connections.kekId,
      })
      .from(connections)
      .where(
        and(
          ne(connections.kekId, exceptKekId),
          after
            ? sql`(${connections.tenantId}, ${connections.sub}, ${connections.credentialId}) > (${after[0]}, ${after[1]}, ${after[2]})`
            : undefined,
        ),
      )
      .orderBy(asc(connections.tenantId), asc(connections.sub), asc(connections.credentialId))
      .limit(limit);
    return rows.map((r) => ({ ...r, key: [r.tenantId, r.sub, r.credentialId] }));
  },
  swap: async (db, row, from, to) => {
    const done = await db
      .update(connections)
      .set(to)
      .where(
        and(
          eq(connections.tenantId, row.tenantId),
          eq(connections.sub, row.sub),
          eq(connections.credentialId, row.credentialId),
          eq(connections.kekId, from.kekId),
          eq(connections.wrappedKey, from.wrappedKey),
        ),
      )
      .returning({ sub: connections.sub });
    return done.length > 0;
  },
};

/** The two tables keyed by a hash (of a state, of a handoff code), rewrapped alike. */
function byHash(
  name: string,
  table: typeof connectionStates | typeof connectionHandoffs,
  hash: typeof connectionStates.stateHash | typeof connectionHandoffs.codeHash,
  binding: Table["binding"],
): Table {
  return {
    name,
    binding,
    next: async (db, exceptKekId, after, limit) => {
      const rows = await db
        .select({
          hash,
          tenantId: table.tenantId,
          sub: table.sub,
          credentialId: table.credentialId,
          wrappedKey: table.wrappedKey,
          kekId: table.kekId,
        })
        .from(table)
        .where(and(ne(table.kekId, exceptKekId), after ? gt(hash, after[0] ?? "") : undefined))
        .orderBy(asc(hash))
        .limit(limit);
      return rows.map(({ hash: h, ...r }) => ({ ...r, key: [h] }));
    },
    swap: async (db, row, from, to) => {
      const done = await db
        .update(table)
        .set(to)
        .where(
          and(eq(hash, row.key[0] ?? ""), eq(table.kekId, from.kekId), eq(table.wrappedKey, from.wrappedKey)),
        )
        .returning({ kekId: table.kekId });
      return done.length > 0;
    },
  };
}

const TABLES: Table[] = [
  grants,
  byHash("connection state", connectionStates, connectionStates.stateHash, verifierBinding),
  byHash("connection handoff", connectionHandoffs, connectionHandoffs.codeHash, grantBinding),
];

/**
 * Re-wraps the data keys of every sealed connection row (grants, connects in progress, connects
 * waiting for the console) from one KEK to another, as `rewrapAll` does for credentials: only
 * `wrapped_key` and `kek_id` change, a row rotated meanwhile (a refresh re-seals its grant) is
 * left to the next run, and rows are named in the report by credential id and sub, never a token.
 */
export async function rewrapConnections({
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
  for (const table of TABLES) {
    let after: string[] | null = null;
    for (;;) {
      const batch = await table.next(db, to.kekId, after, batchSize);
      for (const row of batch) {
        const id = `${table.name} ${row.credentialId} ${row.sub}`;
        let wrappedKey: Buffer;
        try {
          wrappedKey = from.rewrap(table.binding(row), row, to);
        } catch (e) {
          if (!(e instanceof CredentialError)) throw e;
          (e.reason === "unknown_kek" ? report.unknownKek : report.failed).push(id);
          continue;
        }
        if (await table.swap(db, row, row, { wrappedKey, kekId: to.kekId })) report.rewrapped++;
        else report.raced.push(id);
      }
      const last = batch.at(-1);
      if (!last || batch.length < batchSize) break;
      after = last.key;
    }
  }
  return report;
}
