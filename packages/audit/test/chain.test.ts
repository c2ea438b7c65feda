// @stores both: the chain is written and checked through the store's SQL.
import { randomUUID } from "node:crypto";
import { migrate, openStore, policies, type Store } from "@gw/db";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { appendAudit, diffChanges, exportAudit, listAudit, verifyAudit } from "../src/index.ts";

// The audit chain on the store the suite runs on: real Postgres when DATABASE_URL is set, else
// the embedded store.

let store: Store;
beforeAll(async () => {
  store = await openStore(process.env.DATABASE_URL);
  await migrate(store);
});
afterAll(async () => {
  await store?.close();
});

const event = (tenantId: string, n: number) => ({
  tenantId,
  actor: "user-1",
  action: "policy.replace" as const,
  resourceId: "policy",
  requestId: `req-${n}`,
  changes: { version: { from: n - 1, to: n } },
});

describe("audit chain", () => {
  it("links each event to the one before and verifies", async () => {
    const tenant = `t-${randomUUID()}`;
    for (let i = 1; i <= 3; i++) await store.db.transaction((tx) => appendAudit({ tx, ...event(tenant, i) }));
    const { rows, total } = await listAudit(store.db, tenant, { limit: 10, offset: 0 });
    expect(total).toBe(3);
    expect(rows.map((r) => r.seq)).toEqual([3, 2, 1]);
    expect(rows[2]?.prevDigest).toBeNull();
    expect(rows[0]?.prevDigest).toBe(rows[1]?.digest);
    expect(await verifyAudit(store.db, tenant)).toEqual({ events: 3, valid: true });
    // Another tenant has a chain of its own and sees none of these.
    expect(await verifyAudit(store.db, `t-${randomUUID()}`)).toEqual({ events: 0, valid: true });
  });

  it("exports oldest first across keyset pages", async () => {
    const tenant = `t-${randomUUID()}`;
    for (let i = 1; i <= 5; i++) await store.db.transaction((tx) => appendAudit({ tx, ...event(tenant, i) }));
    const seen: number[] = [];
    for await (const row of exportAudit(store.db, tenant, {}, 2)) seen.push(row.seq);
    expect(seen).toEqual([1, 2, 3, 4, 5]);
    const none: number[] = [];
    for await (const row of exportAudit(store.db, tenant, { since: new Date(Date.now() + 60_000) }, 2)) {
      none.push(row.seq);
    }
    expect(none).toEqual([]);
  });

  it("stays one linear chain under concurrent writes of one tenant", async () => {
    const tenant = `t-${randomUUID()}`;
    await Promise.all(
      Array.from({ length: 12 }, (_, i) =>
        store.db.transaction((tx) => appendAudit({ tx, ...event(tenant, i + 1) })),
      ),
    );
    expect(await verifyAudit(store.db, tenant)).toEqual({ events: 12, valid: true });
  });

  it("commits the write and its event together or neither", async () => {
    const tenant = `t-${randomUUID()}`;
    await expect(
      store.db.transaction(async (tx) => {
        await appendAudit({ tx, ...event(tenant, 1) });
        throw new Error("the write failed");
      }),
    ).rejects.toThrow("the write failed");
    expect((await listAudit(store.db, tenant, { limit: 10, offset: 0 })).total).toBe(0);
    // An event the store refuses (a NUL in a text column) fails the write it was to record.
    await expect(
      store.db.transaction(async (tx) => {
        await tx.insert(policies).values({ tenantId: tenant, version: 1, document: { rules: [] } });
        await appendAudit({ tx, ...event(tenant, 1), actor: "bad\u0000actor" });
      }),
    ).rejects.toThrow();
    expect(await store.query("select 1 from policies where tenant_id = $1", [tenant])).toEqual([]);
    expect((await listAudit(store.db, tenant, { limit: 10, offset: 0 })).total).toBe(0);
  });

  it("reports an edited event (on real Postgres, and on the embedded store edited through its own connection)", async () => {
    const tenant = `t-${randomUUID()}`;
    for (let i = 1; i <= 4; i++) await store.db.transaction((tx) => appendAudit({ tx, ...event(tenant, i) }));
    const { rows } = await listAudit(store.db, tenant, { limit: 10, offset: 0 });
    const second = rows[2];
    await store.query("update audit_events set actor = 'someone-else' where id = $1", [second?.id]);
    expect(await verifyAudit(store.db, tenant)).toEqual({
      events: 4,
      valid: false,
      first_bad_id: second?.id,
    });
  });

  it("names secret fields without their values", () => {
    const c = diffChanges({ name: "a", secret: "s1", x: 1 }, { name: "b", secret: "s2", x: 1 }, ["secret"]);
    expect(c).toEqual({ name: { from: "a", to: "b" }, secret: {} });
    expect(JSON.stringify(c)).not.toContain("s2");
  });
});
