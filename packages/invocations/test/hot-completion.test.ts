// @stores once: opens both stores itself in one pass.
import { type Exec, migrate, openStore, type Store } from "@gw/db";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { requestCte, requestParams } from "../src/repos/invocation-reservations.ts";
import { CLAIM_SQL, FAIL_OPEN_SQL } from "../src/repos/invocation-states.ts";
import { UPDATE_SQL, updateParams } from "../src/repos/invocation-update.ts";
import { INSERT_PARAMS, INSERT_SQL, insertParams, insertSql } from "../src/repos/invocation-writer.ts";
import type { NewInvocation } from "../src/repos/invocations.ts";
import { completion } from "../src/terminal.ts";

// ADR 0046: no index of invocations reads a column a completion changes, so the completion is a
// HOT update (no index entry, far less WAL); the open rows are found through invocation_open.
// The counters are the session's not yet reported (pg_stat_get_xact_*; a backend may hold earlier
// transactions' too): read before and after, nothing but this session counts.

const stores: Array<[string, string | undefined]> = [["embedded", undefined]];
if (process.env.DATABASE_URL) stores.push(["postgres", process.env.DATABASE_URL]);

/** The columns a plain completion (no payment, no answer-learned field) or a claim changes. */
const COMPLETION_COLUMNS = [
  "status",
  "error_class",
  "upstream_status",
  "latency_ms",
  "ttft_ms",
  "resp_size",
  "completed_at",
  "started_at",
  "attempts",
];

/** The statement with its parameters written in (a session runs plain text). */
const inline = (sql: string, params: unknown[]) =>
  sql.replace(/\$(\d+)/g, (_, n: string) => {
    const p = params[Number(n) - 1];
    const lit = (s: string) => `'${s.replaceAll("'", "''")}'`;
    return Array.isArray(p) ? `array[${p.map((x) => lit(String(x))).join(", ")}]` : lit(String(p));
  });

type Counted = { updated: number; hot: number };
const counters = async (exec: Exec): Promise<Counted> => {
  const [r] = await exec(`select pg_stat_get_xact_tuples_updated('invocations'::regclass)::int as updated,
    pg_stat_get_xact_tuples_hot_updated('invocations'::regclass)::int as hot`);
  return { updated: Number(r?.updated), hot: Number(r?.hot) };
};

describe.each(stores)("the completion is a HOT update (%s store)", (_name, url) => {
  let store: Store;
  beforeAll(async () => {
    store = await openStore(url);
    await migrate(store);
  });
  afterAll(() => store?.close());

  /** Runs `fn` in a transaction that is rolled back: the table keeps nothing of it. */
  const inTransaction = <T>(fn: (exec: Exec, counted: () => Promise<Counted>) => Promise<T>) =>
    store.session(async (exec) => {
      await exec("begin");
      try {
        const at = await counters(exec);
        return await fn(exec, async () => {
          const now = await counters(exec);
          return { updated: now.updated - at.updated, hot: now.hot - at.hot };
        });
      } finally {
        await exec("rollback");
      }
    });
  /** Where the row's open entry is: its stored request, its invocation_open row, or none. */
  const openEntry = async (exec: Exec, id: string) => {
    const [r] = await exec(`select
      (select count(*)::int from invocation_requests where invocation_id = '${id}') as request,
      (select count(*)::int from invocation_open where invocation_id = '${id}') as open`);
    return r?.request ? "request" : r?.open ? "open" : "none";
  };

  it("a transactional call: insert with its stored request, claim, completion; both updates HOT, the request gone", async () => {
    const tenantId = `t-hot-${Date.now()}`;
    const id = `inv_hot_${Date.now()}`;
    const row: NewInvocation = { id, agentId: "agt_hot", mode: "transactional", reqSize: 29 };
    const r = await inTransaction(async (exec, counted) => {
      const request = { queue: "q-hot", job: { protocol: "http" }, body: Buffer.from("{}") };
      const params = [...insertParams([{ tenantId, row }]), ...requestParams([{ tenantId, id, request }])];
      await exec(inline(insertSql({ storesRequest: true }, requestCte(INSERT_PARAMS + 1)), params));
      const opened = await openEntry(exec, id);
      const claimed = await exec(inline(CLAIM_SQL, [[tenantId], [id]]));
      const set = completion(200, { latencyMs: 12, ttftMs: 3, respSize: 46 });
      await exec(inline(UPDATE_SQL, updateParams([{ tenantId, id, set }])));
      const changed = await counted();
      const stored = (
        await exec(`select status, completed_at is not null as done from invocations where id = '${id}'`)
      )[0];
      return { opened, claimed: claimed.length, changed, stored, left: await openEntry(exec, id) };
    });
    expect(r).toMatchObject({ opened: "request", claimed: 1, left: "none" });
    expect(r.stored).toEqual({ status: "succeeded", done: true });
    expect(r.changed).toEqual({ updated: 2, hot: 2 });
  });

  it("a streaming row and a row without a stored request ended while open (failIfOpen): HOT, their open rows gone; a record written whole is never open", async () => {
    const tenantId = `t-hot-s-${Date.now()}`;
    const stream: NewInvocation = {
      id: `inv_hs_${Date.now()}`,
      agentId: "agt_hot",
      mode: "streaming",
      status: "running",
    };
    const pending: NewInvocation = { id: `inv_hp_${Date.now()}`, agentId: "agt_hot", mode: "transactional" };
    const whole: NewInvocation = { id: `inv_hw_${Date.now()}`, agentId: "agt_hot", mode: "streaming" };
    const r = await inTransaction(async (exec, counted) => {
      const ended = completion(200, { latencyMs: 5 });
      await exec(
        inline(
          INSERT_SQL,
          insertParams([
            { tenantId, row: stream },
            { tenantId, row: pending },
            { tenantId, row: whole, set: ended },
          ]),
        ),
      );
      const opened = await Promise.all([stream, pending, whole].map((x) => openEntry(exec, x.id as string)));
      await exec(inline(UPDATE_SQL, updateParams([{ tenantId, id: stream.id as string, set: ended }])));
      await exec(inline(FAIL_OPEN_SQL, [tenantId, pending.id, "internal"]));
      const left = await Promise.all([stream, pending].map((x) => openEntry(exec, x.id as string)));
      return { opened, left, changed: await counted() };
    });
    expect(r.opened).toEqual(["open", "open", "none"]);
    expect(r.left).toEqual(["none", "none"]);
    expect(r.changed).toEqual({ updated: 2, hot: 2 });
  });

  it("a row inserted before its stored request has both entries; its completion removes both", async () => {
    const tenantId = `t-hot-b-${Date.now()}`;
    const id = `inv_hb_${Date.now()}`;
    const r = await inTransaction(async (exec) => {
      await exec(
        inline(
          INSERT_SQL,
          insertParams([{ tenantId, row: { id, agentId: "agt_hot", mode: "transactional" } }]),
        ),
      );
      await exec(`insert into invocation_requests (invocation_id, tenant_id, queue, job, body)
        values ('${id}', '${tenantId}', 'q-hot', '{}', '')`);
      const both = await exec(
        `select (select count(*)::int from invocation_open where invocation_id = '${id}') as open`,
      );
      await exec(inline(FAIL_OPEN_SQL, [tenantId, id, "internal"]));
      return { open: both[0]?.open, left: await openEntry(exec, id) };
    });
    expect(r).toEqual({ open: 1, left: "none" });
  });

  it("no index of invocations reads a column a completion or a claim changes (keys, expressions, predicates)", async () => {
    const rows = await store.query(
      `select c.relname as name, pg_get_indexdef(x.indexrelid) as def
       from pg_index x join pg_class c on c.oid = x.indexrelid
       where x.indrelid = 'invocations'::regclass`,
      [],
    );
    expect(rows.length).toBeGreaterThan(1);
    for (const r of rows) {
      const def = String(r.def);
      for (const col of COMPLETION_COLUMNS)
        expect(def, String(r.name)).not.toMatch(new RegExp(`\\b${col}\\b`));
    }
  });
});
