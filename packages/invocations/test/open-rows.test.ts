// @stores once: the embedded store only, opened by the file itself.
import { migrate, openStore, type Store } from "@gw/db";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CLAIM_SQL, FAIL_OPEN_SQL, REPEAT_SQL } from "../src/repos/invocation-states.ts";
import { overdueRunning, stalePending } from "../src/repos/reliability.ts";
import { statusSql } from "../src/repos/run-state.ts";

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
    // Their open entries, as the gateway's insert statement writes them (ADR 0049).
    await store.query(
      "insert into invocation_open (invocation_id, tenant_id) select id, tenant_id from invocations where completed_at is null",
      [],
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

// ADR 0030: the claim writes only columns no index reads, so it is a HOT update (no index entry
// written); since ADR 0046 the completion is one too (open rows are found through invocation_open).
describe("the claim is a HOT update (embedded store)", () => {
  let store: Store;
  beforeAll(async () => {
    store = await openStore(undefined);
    await migrate(store);
  });
  afterAll(() => store.close());

  it("claim: HOT, status still pending, reads as running; completion: HOT", async () => {
    const claim = CLAIM_SQL.replace("$1::text[]", "array['ten_h']").replace("$2::text[]", "array['inv_h_1']");
    const counters = `select pg_stat_get_xact_tuples_updated('invocations'::regclass)::int as updated,
      pg_stat_get_xact_tuples_hot_updated('invocations'::regclass)::int as hot`;
    const rows = await store.session(async (exec) => {
      await exec(`begin;
        insert into invocations (id, tenant_id, agent_id, mode, status) values ('inv_h_1', 'ten_h', 'agt_h', 'transactional', 'pending')`);
      try {
        const claimed = await exec(claim);
        const afterClaim =
          await exec(`${counters}, (select ${statusSql()} from invocations where id = 'inv_h_1') as reads,
          (select status from invocations where id = 'inv_h_1') as stored`);
        await exec(
          "update invocations set status = 'succeeded', completed_at = now(), latency_ms = 3 where id = 'inv_h_1'",
        );
        const afterDone = await exec(counters);
        return { claimed, afterClaim: afterClaim[0], afterDone: afterDone[0] };
      } finally {
        await exec("rollback");
      }
    });
    expect(rows.claimed).toHaveLength(1);
    expect(rows.afterClaim).toMatchObject({ updated: 1, hot: 1, reads: "running", stored: "pending" });
    expect(rows.afterDone).toMatchObject({ updated: 2, hot: 2 });
  });
});
