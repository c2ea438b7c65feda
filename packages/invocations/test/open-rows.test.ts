import { migrate, openStore, type Store } from "@gw/db";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CLAIM_SQL, FAIL_OPEN_SQL, REPEAT_SQL } from "../src/repos/invocation-states.ts";
import { overdueRunning, stalePending } from "../src/repos/reliability.ts";

// The by-id state changes (the worker's claim, failIfOpen, the repeat) must be planned through the
// primary key whatever ANALYZE last saw. Before migration 0010 the open-row index answered to
// "status in ('pending', 'running')"; after an ANALYZE that saw no open rows, the claim walked that
// index, every open row of every tenant per batch, and the drain slowed as the backlog grew.

const DONE = 20_000;
const BACKLOG = 3_000;

async function plan(store: Store, sql: string, params: unknown[]): Promise<string> {
  const rows = await store.query(`explain ${sql}`, params);
  return rows.map((r) => String(r["QUERY PLAN"])).join("\n");
}

describe("open rows (embedded store: its statistics are this test's alone)", () => {
  let store: Store;
  const ids = ["inv_b_1", "inv_b_2"];
  beforeAll(async () => {
    store = await openStore(undefined);
    await migrate(store);
    // Statistics taken over finished rows and no open one, then a backlog the planner has not seen.
    await store.query(
      `insert into invocations (id, tenant_id, agent_id, mode, status, created_at, completed_at)
       select 'inv_done_' || g, 'ten_b', 'agt_b', 'transactional', 'succeeded', now() - interval '2 hours', now()
       from generate_series(1, $1::int) g`,
      [DONE],
    );
    await store.query("analyze invocations", []);
    await store.query(
      `insert into invocations (id, tenant_id, agent_id, mode, status, created_at)
       select 'inv_b_' || g, 'ten_b', 'agt_b', 'transactional', 'pending', now() - interval '1 hour'
       from generate_series(1, $1::int) g`,
      [BACKLOG],
    );
  });
  afterAll(() => store.close());

  const statements: Array<[string, string, unknown[]]> = [
    ["claim", CLAIM_SQL, [["ten_b", "ten_b"], ids]],
    ["failIfOpen", FAIL_OPEN_SQL, ["ten_b", ids[0], "internal"]],
    ["repeat", REPEAT_SQL, ["ten_b", ids[0]]],
  ];

  it.each(statements)(
    "the %s is planned through the primary key, not the open-row index",
    async (_, sql, params) => {
      const text = await plan(store, sql, params);
      expect(text).toContain("invocations_pkey");
      expect(text).not.toContain("invocations_unfinished_idx");
    },
  );

  it("with the old status predicate the same statistics chose the open-row index (the hazard this guards)", async () => {
    await store.query(
      `create index invocations_status_open_idx on invocations (mode, status, created_at)
       where status in ('pending', 'running')`,
      [],
    );
    try {
      expect(await plan(store, CLAIM_SQL, [["ten_b", "ten_b"], ids])).toContain(
        "invocations_status_open_idx",
      );
    } finally {
      await store.query("drop index invocations_status_open_idx", []);
    }
  });

  it("the reconciler and the sweeper still find open rows, and a row with completed_at set is not one", async () => {
    const before = new Date();
    const pending = await stalePending(store.query, "q", before, 10);
    expect(pending).toHaveLength(10);
    expect(pending.every((r) => r.tenantId === "ten_b")).toBe(true);
    await store.query(
      "update invocations set status = 'running', started_at = now() - interval '1 hour' where id = $1",
      ["inv_b_3"],
    );
    expect((await overdueRunning(store.query, before, 10)).map((r) => r.id)).toEqual(["inv_b_3"]);
    await store.query("update invocations set status = 'failed', completed_at = now() where id = $1", [
      "inv_b_3",
    ]);
    expect(await overdueRunning(store.query, before, 10)).toEqual([]);
  });
});
