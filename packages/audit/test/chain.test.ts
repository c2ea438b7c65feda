// @stores both: the chain is written and checked through the store's SQL.
import { randomUUID } from "node:crypto";
import { canonicalJson, newId } from "@gw/core";
import { type Db, migrate, openStore, policies, type Store } from "@gw/db";
import { sql } from "drizzle-orm";
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

  it("stays one chain while a replica of the previous release appends with its own two statements", async () => {
    const tenant = `t-${randomUUID()}`;
    await Promise.all(
      Array.from({ length: 12 }, (_, i) =>
        store.db.transaction(async (tx) => {
          if (i % 2 === 0) await appendAudit({ tx, ...event(tenant, i + 1) });
          else await appendTheEarlierWay(tx, event(tenant, i + 1));
        }),
      ),
    );
    const { rows } = await listAudit(store.db, tenant, { limit: 20, offset: 0 });
    expect(rows.map((r) => r.seq)).toEqual([12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1]);
    expect(new Set(rows.map((r) => r.requestId)).size).toBe(12);
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

/**
 * How the release before `gw_audit_append` appended an event: the chain lock and an insert that
 * read the head, two statements pipelined on the transaction. A replica still running it during a
 * rollout must keep one chain with the function.
 */
async function appendTheEarlierWay(tx: Db, e: ReturnType<typeof event>): Promise<void> {
  const id = newId("aud");
  const createdAt = new Date().toISOString();
  const canonical = canonicalJson({
    id,
    tenant_id: e.tenantId,
    actor: e.actor,
    action: e.action,
    resource_id: e.resourceId,
    request_id: e.requestId,
    created_at: createdAt,
    changes: e.changes,
  });
  const lock = tx.execute(sql`select pg_advisory_xact_lock(741913, hashtext(${e.tenantId}))`);
  const insert = tx.execute(sql`
    with head as (
      select seq, digest from audit_events where tenant_id = ${e.tenantId} order by seq desc limit 1
    )
    insert into audit_events
      (id, tenant_id, seq, actor, action, resource_id, request_id, created_at, changes, prev_digest, digest)
    select ${id}, ${e.tenantId}, coalesce((select seq from head), 0) + 1, ${e.actor}, ${e.action},
      ${e.resourceId}, ${e.requestId}, ${createdAt}::timestamptz, ${JSON.stringify(e.changes)}::jsonb,
      (select digest from head),
      'sha256:' || encode(sha256(convert_to(coalesce((select digest from head), '') || ${canonical}, 'UTF8')), 'hex')`);
  await Promise.all([lock, insert]);
}
