import { connectionHandoffs, connectionStates, connections } from "@gw/db";
import { and, asc, eq, gt, ne, sql } from "drizzle-orm";
import {
  type RewrapArgs,
  type RewrapReport,
  rewrapTables,
  type SealedTable,
  type WrappedKey,
} from "../rewrap.ts";
import type { Owner } from "./repo.ts";
import { grantBinding, verifierBinding } from "./tokens.ts";

/**
 * The sealed rows of connections (docs/connections.md), each a table of its own: people's grants,
 * connects in progress (their PKCE verifier) and connects waiting for the console (their grant).
 * A row is named in the report by credential id and sub (never a token).
 */
type Row = Owner & WrappedKey & { key: string[] };
type Table = SealedTable<Row, string[]>;
const label = (name: string) => (row: Row) => `${name} ${row.credentialId} ${row.sub}`;

const grants: Table = {
  label: label("connection"),
  key: (row) => row.key,
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
  swap: async (db, row, to) => {
    const done = await db
      .update(connections)
      .set(to)
      .where(
        and(
          eq(connections.tenantId, row.tenantId),
          eq(connections.sub, row.sub),
          eq(connections.credentialId, row.credentialId),
          eq(connections.kekId, row.kekId),
          eq(connections.wrappedKey, row.wrappedKey),
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
    label: label(name),
    key: (row) => row.key,
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
    swap: async (db, row, to) => {
      const done = await db
        .update(table)
        .set(to)
        .where(
          and(eq(hash, row.key[0] ?? ""), eq(table.kekId, row.kekId), eq(table.wrappedKey, row.wrappedKey)),
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
export function rewrapConnections(args: RewrapArgs): Promise<RewrapReport> {
  return rewrapTables(TABLES, args);
}
