import {
  type ConnectionHandoffRow,
  type ConnectionRow,
  type ConnectionStateRow,
  connectionHandoffs,
  connectionStates,
  connections,
  credentials,
  type Db,
} from "@gw/db";
import { and, asc, eq, lt, sql } from "drizzle-orm";

/** Who a connection belongs to: every query takes all three (there is no read by credential alone). */
export type Owner = { tenantId: string; sub: string; credentialId: string };

const one = (o: Owner) =>
  and(
    eq(connections.tenantId, o.tenantId),
    eq(connections.sub, o.sub),
    eq(connections.credentialId, o.credentialId),
  );

export type SealedTokens = Pick<ConnectionRow, "ciphertext" | "wrappedKey" | "kekId">;

export const connectionRepo = {
  async get(db: Db, o: Owner): Promise<ConnectionRow | undefined> {
    const [row] = await db.select().from(connections).where(one(o)).limit(1);
    return row;
  },

  /**
   * The row locked for this transaction (`FOR UPDATE`): the one refresh of a grant at a time,
   * whichever replica asks (docs/connections.md, refresh tokens rotate).
   */
  async lock(tx: Db, o: Owner): Promise<ConnectionRow | undefined> {
    const [row] = await tx.select().from(connections).where(one(o)).limit(1).for("update");
    return row;
  },

  /** Stores (or replaces) the person's grant. */
  async put(
    db: Db,
    o: Owner,
    v: SealedTokens & { expiresAt: Date | null; scopes: string | null },
  ): Promise<ConnectionRow> {
    const now = new Date();
    const [row] = await db
      .insert(connections)
      .values({ ...o, ...v, createdAt: now, updatedAt: now })
      .onConflictDoUpdate({
        target: [connections.tenantId, connections.sub, connections.credentialId],
        set: { ...v, createdAt: now, updatedAt: now, lastUsedAt: null },
      })
      .returning();
    if (!row) throw new Error("upsert returned no row");
    return row;
  },

  async update(db: Db, o: Owner, v: SealedTokens & { expiresAt: Date | null; scopes?: string | null }) {
    await db
      .update(connections)
      .set({ ...v, updatedAt: new Date() })
      .where(one(o));
  },

  async remove(db: Db, o: Owner): Promise<ConnectionRow | undefined> {
    const [row] = await db.delete(connections).where(one(o)).returning();
    return row;
  },

  /** Marks a use, at most once a minute per connection (a write per call would cost every call). */
  async touch(db: Db, o: Owner): Promise<void> {
    await db
      .update(connections)
      .set({ lastUsedAt: sql`now()` })
      .where(
        and(
          one(o),
          sql`(${connections.lastUsedAt} IS NULL OR ${connections.lastUsedAt} < now() - interval '1 minute')`,
        ),
      );
  },

  /** The caller's own connections with their credential's name, oldest first. */
  async listMine(db: Db, tenantId: string, sub: string) {
    return db
      .select({
        credentialId: connections.credentialId,
        credentialName: credentials.name,
        expiresAt: connections.expiresAt,
        scopes: connections.scopes,
        createdAt: connections.createdAt,
        lastUsedAt: connections.lastUsedAt,
        ciphertext: connections.ciphertext,
        wrappedKey: connections.wrappedKey,
        kekId: connections.kekId,
      })
      .from(connections)
      .innerJoin(
        credentials,
        and(eq(credentials.id, connections.credentialId), eq(credentials.tenantId, connections.tenantId)),
      )
      .where(and(eq(connections.tenantId, tenantId), eq(connections.sub, sub)))
      .orderBy(asc(connections.createdAt));
  },
};

export const stateRepo = {
  async insert(db: Db, row: ConnectionStateRow): Promise<void> {
    await db.insert(connectionStates).values(row);
    // Expired states are garbage: each new connect sweeps a few (no background job needed).
    await db
      .delete(connectionStates)
      .where(
        sql`${connectionStates.stateHash} IN (SELECT ${connectionStates.stateHash} FROM ${connectionStates} WHERE ${lt(connectionStates.expiresAt, new Date())} LIMIT 100)`,
      );
  },

  /** Redeems a state: deleted in the same statement that reads it, so it serves once. */
  async take(db: Db, stateHash: string): Promise<ConnectionStateRow | undefined> {
    const [row] = await db
      .delete(connectionStates)
      .where(eq(connectionStates.stateHash, stateHash))
      .returning();
    return row;
  },
};

export const handoffRepo = {
  async insert(db: Db, row: ConnectionHandoffRow): Promise<void> {
    await db.insert(connectionHandoffs).values(row);
    // As for states: each new handoff sweeps a few expired ones.
    await db
      .delete(connectionHandoffs)
      .where(
        sql`${connectionHandoffs.codeHash} IN (SELECT ${connectionHandoffs.codeHash} FROM ${connectionHandoffs} WHERE ${lt(connectionHandoffs.expiresAt, new Date())} LIMIT 100)`,
      );
  },

  /** Redeems a handoff: deleted in the same statement that reads it, so it serves once. */
  async take(db: Db, codeHash: string): Promise<ConnectionHandoffRow | undefined> {
    const [row] = await db
      .delete(connectionHandoffs)
      .where(eq(connectionHandoffs.codeHash, codeHash))
      .returning();
    return row;
  },
};
