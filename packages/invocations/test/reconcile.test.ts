// @stores both: the reconciler and sweeper are SQL over open rows.
import { randomUUID } from "node:crypto";
import { migrate, openStore, type Store } from "@gw/db";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createInvocationLifecycle, type Lifecycle } from "../src/lifecycle.ts";
import { reconcileOnce } from "../src/reconcile.ts";
import { statusSql } from "../src/repos/run-state.ts";

// The store of the suite (DATABASE_URL, else the embedded one): the same SQL either way.
let store: Store;
let life: Lifecycle;
beforeAll(async () => {
  store = await openStore(process.env.DATABASE_URL || undefined);
  await migrate(store);
  life = createInvocationLifecycle({ store });
  // A pending row is re-rung only once the database has been up for the grace too (a restarted
  // Postgres is given time for its proxies' own enqueues): the embedded store started just now.
  const [up] = await store.query(
    "select extract(epoch from now() - pg_postmaster_start_time()) * 1000 as ms",
    [],
  );
  const waitMs = GRACE_MS + 100 - Number(up?.ms ?? 0);
  if (waitMs > 0) await new Promise((r) => setTimeout(r, waitMs));
});
afterAll(() => store.close());

const tenant = () => `t-${randomUUID()}`;
/** This suite's own queue: other deployments' pending rows on the shared database are not ours. */
const QUEUE = `reconcile-${randomUUID()}`;
const inv = () => `inv_${randomUUID()}`;
const GRACE_MS = 5_000;

/**
 * Makes a row (and its stored request) look as if it had been opened (and, if claimed, started)
 * `ago` ms before now. An unclaimed row keeps `started_at` null: set, it would read as running.
 */
async function age(id: string, ago: number) {
  await store.query(
    `update invocations set created_at = now() - make_interval(secs => $2::float8 / 1000),
       started_at = case when started_at is null then null else now() - make_interval(secs => $2::float8 / 1000) end
     where id = $1`,
    [id, ago],
  );
  await store.query(
    "update invocation_requests set created_at = now() - make_interval(secs => $2::float8 / 1000) where invocation_id = $1",
    [id, ago],
  );
}

async function status(tenantId: string, id: string) {
  const [r] = await store.query(
    `select ${statusSql()} as status, error_class from invocations where tenant_id = $1 and id = $2`,
    [tenantId, id],
  );
  return r;
}

async function transactional(tenantId: string, job: Record<string, unknown>) {
  const id = inv();
  await life.open(
    tenantId,
    {
      id,
      agentId: "agt_x",
      mode: "transactional",
      status: "pending",
      mcpMethod: (job.mcpMethod as string) ?? null,
    },
    {
      durable: true,
      request: { queue: QUEUE, job: { ...job, invocationId: id, tenantId }, body: Buffer.from("b") },
    },
  );
  return id;
}

/** One pass; `queued`: the invocation ids a live job carries. */
function pass(rung: Array<Record<string, unknown>>, queued: string[] = []) {
  return reconcileOnce(
    {
      store,
      invocations: life,
      doorbell: {
        queue: QUEUE,
        live: async () => new Set(queued),
        ring: async (call) => void rung.push(call),
      },
    },
    {
      pendingGraceMs: GRACE_MS,
      runningDeadlineMs: 60_000,
      mayRepeat: (c) => c.protocol === "mcp" && c.mcpMethod === "tools/list",
    },
  );
}

describe("reconciler and sweeper", () => {
  it("re-rings a pending row no live job carries, with its ids; leaves young and queued ones", async () => {
    const t = tenant();
    const lost = await transactional(t, { protocol: "http", mcpMethod: null });
    const queued = await transactional(t, { protocol: "http", mcpMethod: null });
    const young = await transactional(t, { protocol: "http", mcpMethod: null });
    await age(lost, 10_000);
    await age(queued, 10_000);
    const rung: Array<Record<string, unknown>> = [];
    await pass(rung, [queued]);
    const mine = rung.filter((j) => j.tenantId === t);
    expect(mine).toEqual([{ tenantId: t, agentId: "agt_x", invocationId: lost }]);
    expect((await status(t, young))?.status).toBe("pending");
  });

  it("leaves a row that committed late (an old call, a fresh insert): its proxy answered 503 and ends it", async () => {
    const t = tenant();
    const late = await transactional(t, { protocol: "http", mcpMethod: null });
    // The call's own time is old, as when its insert waited out a Postgres outage; the row itself
    // was inserted just now (its stored request's time is the database's clock at the insert).
    await store.query("update invocations set created_at = now() - make_interval(secs => 60) where id = $1", [
      late,
    ]);
    const rung: Array<Record<string, unknown>> = [];
    await pass(rung);
    expect(rung.filter((j) => j.tenantId === t)).toEqual([]);
    expect((await status(t, late))?.status).toBe("pending");
  });

  it("ends an abandoned running http call, re-queues a safe-to-repeat MCP one", async () => {
    const t = tenant();
    const http = await transactional(t, { protocol: "http", mcpMethod: null });
    const list = await transactional(t, { protocol: "mcp", mcpMethod: "tools/list" });
    const call = await transactional(t, { protocol: "mcp", mcpMethod: "tools/call" });
    const fresh = await transactional(t, { protocol: "http", mcpMethod: null });
    for (const id of [http, list, call, fresh]) await life.claim({ tenantId: t, id, agentId: "agt_x" });
    for (const id of [http, list, call]) await age(id, 120_000);
    const rung: Array<Record<string, unknown>> = [];
    await pass(rung);
    expect(await status(t, http)).toMatchObject({ status: "failed", error_class: "internal" });
    expect(await status(t, call)).toMatchObject({ status: "failed", error_class: "internal" });
    expect((await status(t, list))?.status).toBe("pending");
    expect(rung.filter((j) => j.tenantId === t).map((j) => j.invocationId)).toEqual([list]);
    expect((await status(t, fresh))?.status).toBe("running");
    // A second pass (another replica) changes nothing more.
    const again: Array<Record<string, unknown>> = [];
    await pass(again, [list]);
    expect(again.filter((j) => j.tenantId === t)).toEqual([]);
  });

  it("ends a streaming row whose process stopped beating, never one of a live process", async () => {
    const t = tenant();
    const dead = inv();
    const live = inv();
    const liveProcess = `proxy-${randomUUID()}`;
    await store.query("insert into gw_instances (id, service) values ($1, 'proxy')", [liveProcess]);
    for (const [id, owner] of [
      [dead, `proxy-${randomUUID()}`],
      [live, liveProcess],
    ] as const) {
      await life.open(
        t,
        { id, agentId: "agt_x", mode: "streaming", status: "running", instanceId: owner },
        { durable: true },
      );
      await age(id, 3_600_000);
    }
    await pass([]);
    expect(await status(t, dead)).toMatchObject({ status: "failed", error_class: "internal" });
    expect((await status(t, live))?.status).toBe("running");
  });
});
