import { type Db, type SettlementConfigRow, settlementConfigs } from "@gw/db";
import { eq } from "drizzle-orm";

/** Settlement configuration queries; every one takes the tenant id (one row per tenant). */
export const settlementConfigRepo = {
  async get(db: Db, tenantId: string): Promise<SettlementConfigRow | undefined> {
    const [row] = await db
      .select()
      .from(settlementConfigs)
      .where(eq(settlementConfigs.tenantId, tenantId))
      .limit(1);
    return row;
  },

  /** Creates or replaces the tenant's configuration in one statement. */
  async put(
    db: Db,
    tenantId: string,
    value: { facilitatorUrl: string; facilitatorCredentialRef: string | null },
  ): Promise<SettlementConfigRow> {
    const now = new Date();
    const [row] = await db
      .insert(settlementConfigs)
      .values({ tenantId, ...value, createdAt: now, updatedAt: now })
      .onConflictDoUpdate({ target: settlementConfigs.tenantId, set: { ...value, updatedAt: now } })
      .returning();
    if (!row) throw new Error("upsert returned no row");
    return row;
  },
};
