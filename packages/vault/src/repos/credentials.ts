import { agents, type CredentialRow, credentials, type Db, readPage, settlementConfigs } from "@gw/db";
import { and, asc, desc, eq, gt, isNull, ne, notExists, sql } from "drizzle-orm";

export type NewCredential = Omit<typeof credentials.$inferInsert, "tenantId" | "createdAt" | "updatedAt">;
/** The columns that depend on the kind: the api_key header, or an OAuth client's settings. */
export type KindColumn =
  | "headerName"
  | "tokenUrl"
  | "clientId"
  | "scope"
  | "audience"
  | "authMethod"
  | "authorizationUrl"
  | "revocationUrl"
  | "issuer"
  | "resource";
/** A rotation: new sealed secret (and optionally new name, kind, header). `version` goes up by one. */
export type CredentialRotation = Pick<NewCredential, "ciphertext" | "wrappedKey" | "kekId" | "hint"> &
  Partial<Pick<NewCredential, "name" | "kind" | "allowedHosts" | KindColumn>>;

const one = (tenantId: string, id: string) => and(eq(credentials.tenantId, tenantId), eq(credentials.id, id));

/**
 * Credential queries. Every function a request can reach takes the tenant id: there is no unscoped
 * read. The two `*ForRewrap` functions are the exception on purpose: key rotation is an operator
 * action over every tenant's rows, reachable only from the rotate-kek CLI.
 */
export const credentialRepo = {
  /** Throws the driver's unique violation on a duplicate name (see isUniqueViolation). */
  async insert(db: Db, tenantId: string, row: NewCredential): Promise<CredentialRow> {
    const [created] = await db
      .insert(credentials)
      .values({ ...row, tenantId })
      .returning();
    if (!created) throw new Error("insert returned no row");
    return created;
  },

  async get(db: Db, tenantId: string, id: string): Promise<CredentialRow | undefined> {
    const [row] = await db.select().from(credentials).where(one(tenantId, id)).limit(1);
    return row;
  },

  async exists(db: Db, tenantId: string, id: string): Promise<boolean> {
    const [row] = await db.select({ id: credentials.id }).from(credentials).where(one(tenantId, id)).limit(1);
    return row !== undefined;
  },

  async list(
    db: Db,
    tenantId: string,
    q: { limit: number; offset: number },
  ): Promise<{ rows: CredentialRow[]; total: number }> {
    const where = eq(credentials.tenantId, tenantId);
    const order = [desc(credentials.createdAt), desc(credentials.id)];
    return readPage<CredentialRow>(db, credentials, { where, order, limit: q.limit, offset: q.offset });
  },

  /** Replaces the sealed secret and bumps `version` in one statement. Throws on a duplicate name. */
  async rotate(
    db: Db,
    tenantId: string,
    id: string,
    r: CredentialRotation,
  ): Promise<CredentialRow | undefined> {
    const [row] = await db
      .update(credentials)
      .set({ ...r, version: sql`${credentials.version} + 1`, updatedAt: new Date() })
      .where(one(tenantId, id))
      .returning();
    return row;
  },

  /**
   * Deletes the credential unless a live (not soft-deleted) agent of the tenant, or the tenant's
   * settlement configuration, references it; the check and the delete are one statement so a
   * reference seen now cannot be lost in between.
   */
  async deleteUnreferenced(
    db: Db,
    tenantId: string,
    id: string,
  ): Promise<"deleted" | "referenced" | "not_found"> {
    const referencing = db
      .select({ one: sql`1` })
      .from(agents)
      .where(and(eq(agents.tenantId, tenantId), eq(agents.credentialRef, id), isNull(agents.deletedAt)));
    const settling = db
      .select({ one: sql`1` })
      .from(settlementConfigs)
      .where(
        and(eq(settlementConfigs.tenantId, tenantId), eq(settlementConfigs.facilitatorCredentialRef, id)),
      );
    const rows = await db
      .delete(credentials)
      .where(and(one(tenantId, id), notExists(referencing), notExists(settling)))
      .returning({ id: credentials.id });
    if (rows.length > 0) return "deleted";
    return (await credentialRepo.exists(db, tenantId, id)) ? "referenced" : "not_found";
  },

  /** Operator-only (rotate-kek): the next batch of rows not wrapped by `exceptKekId`, by id. */
  async listForRewrap(
    db: Db,
    q: { exceptKekId: string; afterId: string; limit: number },
  ): Promise<Array<Pick<CredentialRow, "id" | "tenantId" | "wrappedKey" | "kekId">>> {
    return db
      .select({
        id: credentials.id,
        tenantId: credentials.tenantId,
        wrappedKey: credentials.wrappedKey,
        kekId: credentials.kekId,
      })
      .from(credentials)
      .where(and(ne(credentials.kekId, q.exceptKekId), gt(credentials.id, q.afterId)))
      .orderBy(asc(credentials.id))
      .limit(q.limit);
  },

  /**
   * Operator-only (rotate-kek): swaps the wrapped data key, only if the row is still wrapped by
   * `fromKekId` and still has the wrapped key that was read (a concurrent rotation of the secret
   * wins). The ciphertext is not touched. `updated_at` is left alone: nothing a caller sees changed.
   */
  async setWrappedKeyForRewrap(
    db: Db,
    tenantId: string,
    id: string,
    from: { kekId: string; wrappedKey: Buffer },
    to: { kekId: string; wrappedKey: Buffer },
  ): Promise<boolean> {
    const rows = await db
      .update(credentials)
      .set({ wrappedKey: to.wrappedKey, kekId: to.kekId })
      .where(
        and(
          one(tenantId, id),
          eq(credentials.kekId, from.kekId),
          eq(credentials.wrappedKey, from.wrappedKey),
        ),
      )
      .returning({ id: credentials.id });
    return rows.length > 0;
  },
};
