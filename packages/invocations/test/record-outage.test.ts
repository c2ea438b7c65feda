// @stores once: Postgres only: an outage cut in a TCP forwarder.
import { randomUUID } from "node:crypto";
import { setTimeout as sleep } from "node:timers/promises";
import { withinDeadline } from "@gw/core";
import { migrate, openStore, type Store } from "@gw/db";
import { startTcpForwarder, type TcpForwarder, TEST_DATABASE_URL } from "@gw/fixtures";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createInvocationLifecycle, type Lifecycle, type TerminalEvent } from "../src/lifecycle.ts";
import type { NewInvocation } from "../src/repos/invocations.ts";

// Record writes (a streaming call's row, every terminal write) are held and retried while the store
// is unreachable (`withStoreRetry`, docs/reliability.md): an outage delays them, it never drops one. The
// lifecycle writes through a TCP forwarder this file cuts, so what it meets is the driver's own
// error (a reset connection, a refused connect); the rows are read on a direct connection.

// Postgres only: the embedded store (PGlite) has no network to lose.
const suite = TEST_DATABASE_URL ? describe : describe.skip;

type Row = { id: string; status: string; error_class: string | null; upstream_status: number | null };

suite("record writes across a Postgres outage", () => {
  let fwd: TcpForwarder;
  let store: Store;
  let direct: Store;
  let life: Lifecycle;
  const heard: TerminalEvent[] = [];

  beforeAll(async () => {
    const url = new URL(TEST_DATABASE_URL as string);
    direct = await openStore(url.href);
    await migrate(direct);
    fwd = await startTcpForwarder(url);
    // As the data plane opens it: records on their own pool, committed without the WAL flush.
    store = await openStore(fwd.url, { syncRecords: false });
    life = createInvocationLifecycle({ store, onTerminal: (e) => heard.push(e) });
  });
  afterAll(async () => {
    await store?.close();
    await direct?.close();
    await fwd?.close();
  });

  const rows = async (tenantId: string): Promise<Map<string, Row>> => {
    const got = await direct.query(
      "select id, status, error_class, upstream_status from invocations where tenant_id = $1",
      [tenantId],
    );
    return new Map(got.map((r) => [String(r.id), r as unknown as Row]));
  };
  /** Waits until the direct connection sees `ids` with `status` (what the cut forwarder let through). */
  const seen = async (tenantId: string, ids: string[], status: string) => {
    // Generous: a loaded CI machine can take seconds to flush the records' batch.
    const until = Date.now() + 30_000;
    for (;;) {
      const now = await rows(tenantId);
      if (ids.every((id) => now.get(id)?.status === status)) return;
      if (Date.now() > until) throw new Error(`rows not ${status}`);
      await sleep(20);
    }
  };
  const streaming = (agentId: string): NewInvocation & { id: string } => ({
    id: `inv_${randomUUID()}`,
    agentId,
    mode: "streaming",
    status: "running",
    startedAt: new Date(),
    createdAt: new Date(),
    instanceId: "record-outage-test",
  });
  /** Tracks whether a write settled, and how. */
  const track = (p: Promise<void>) => {
    const t = { settled: false, error: undefined as unknown, done: p };
    t.done = p.then(
      () => {
        t.settled = true;
      },
      (e: unknown) => {
        t.settled = true;
        t.error = e;
      },
    );
    return t;
  };

  it("refused for a while: every record is written once the store is back, none left open, none missing", async () => {
    const tenantId = `t-outage-${randomUUID()}`;
    const agentId = "agt_outage";
    const ref = (id: string) => ({ tenantId, id, agentId });

    // Before the cut: streams whose running row is in, and transactional calls opened durably.
    const running = Array.from({ length: 5 }, () => streaming(agentId));
    const runningHandles = running.map((r) => life.openDeferred(r, ref(r.id), 0));
    const pending = Array.from({ length: 5 }, () => ({
      id: `inv_${randomUUID()}`,
      agentId,
      mode: "transactional" as const,
      status: "pending" as const,
    }));
    for (const r of pending) await life.open(tenantId, r, { durable: true });
    await seen(
      tenantId,
      running.map((r) => r.id),
      "running",
    );
    // Streams that end during the outage before their row went in (one INSERT of the final
    // state), and streams whose running row falls due during it.
    const quick = Array.from({ length: 5 }, () => streaming(agentId));
    const quickHandles = quick.map((r) => life.openDeferred(r, ref(r.id), 60_000));
    const due = Array.from({ length: 5 }, () => streaming(agentId));

    await fwd.cut("refuse");
    const writes = [
      ...runningHandles.map((h) => h.complete(200, { respSize: 11, latencyMs: 5 })),
      ...quickHandles.map((h) => h.complete(502, { respSize: 3, latencyMs: 4 })),
      ...due.map(async (r) => {
        const h = life.openDeferred(r, ref(r.id), 50);
        await sleep(200); // the running row's insert is due, and refused
        await h.fail("unreachable", { latencyMs: 200 });
      }),
      ...pending.map((r, i) =>
        i % 2 === 0
          ? life.handle(ref(r.id)).complete(200, { respSize: 7 })
          : life.fail(ref(r.id), "timeout", { latencyMs: 30_000 }),
      ),
    ].map(track);
    await sleep(1_500);
    // The outage was real: nothing written meanwhile, no write given up on.
    expect(writes.filter((w) => w.settled)).toEqual([]);
    const during = await rows(tenantId);
    expect([...during.values()].filter((r) => r.status !== "running" && r.status !== "pending")).toEqual([]);
    expect(during.size).toBe(running.length + pending.length);

    await fwd.restore();
    await Promise.all(writes.map((w) => w.done));
    expect(writes.map((w) => w.error).filter(Boolean)).toEqual([]);

    const after = await rows(tenantId);
    const want = new Map<string, Partial<Row>>([
      ...running.map((r) => [r.id, { status: "succeeded", upstream_status: 200 }] as const),
      ...quick.map(
        (r) => [r.id, { status: "failed", upstream_status: 502, error_class: "upstream_5xx" }] as const,
      ),
      ...due.map((r) => [r.id, { status: "failed", error_class: "upstream_5xx" }] as const),
      ...pending.map(
        (r, i) =>
          [
            r.id,
            i % 2 === 0 ? { status: "succeeded" } : { status: "failed", error_class: "timeout" },
          ] as const,
      ),
    ]);
    expect(after.size).toBe(want.size);
    for (const [id, w] of want) expect(after.get(id), id).toMatchObject(w);
    // Each terminal write was heard once, after it committed.
    const heardHere = heard.filter((e) => e.tenantId === tenantId).map((e) => e.id);
    expect(heardHere.sort()).toEqual([...want.keys()].sort());
  });

  /**
   * The store runs what the records' pool sends and its answers never come back; once `id` shows
   * `status` on the direct connection, the connection is reset, and the store is back soon after.
   * A connection of the pool is opened first (a muted forwarder would swallow a new one's handshake).
   */
  const loseAnswer = async (tenantId: string, send: () => void, id: string, status: string) => {
    const warm = streaming("agt_warm");
    await life.openDeferred(warm, { tenantId, id: warm.id, agentId: warm.agentId }, 60_000).complete(200, {});
    fwd.mute();
    try {
      send();
      await seen(tenantId, [id], status);
      await fwd.cut("refuse");
      await sleep(300);
    } finally {
      // Restored even when the wait failed, so the next test does not find the store muted.
      await fwd.restore();
    }
  };

  it("a running row whose answer was lost after it committed: the retried insert finds it, the call still ends", async () => {
    const tenantId = `t-outage-${randomUUID()}`;
    const row = streaming("agt_outage");
    const ref = { tenantId, id: row.id, agentId: row.agentId };
    let handle: ReturnType<Lifecycle["openDeferred"]> | undefined;
    await loseAnswer(
      tenantId,
      () => {
        handle = life.openDeferred(row, ref, 0);
      },
      row.id,
      "running",
    );
    await handle?.complete(200, { respSize: 9 });
    expect((await rows(tenantId)).get(row.id)).toMatchObject({ status: "succeeded", upstream_status: 200 });
    expect(heard.filter((e) => e.id === row.id)).toHaveLength(1);
  });

  it("a whole record whose answer was lost after it committed: the retried insert finds it, the write ends", async () => {
    const tenantId = `t-outage-${randomUUID()}`;
    const row = streaming("agt_outage");
    const ref = { tenantId, id: row.id, agentId: row.agentId };
    let end: Promise<void> | undefined;
    await loseAnswer(
      tenantId,
      () => {
        end = life.openDeferred(row, ref, 60_000).complete(200, { respSize: 5 });
      },
      row.id,
      "succeeded",
    );
    await end;
    expect((await rows(tenantId)).get(row.id)).toMatchObject({ status: "succeeded", upstream_status: 200 });
    expect(heard.filter((e) => e.id === row.id)).toHaveLength(1);
  });

  it("a pool that failed many connects is back soon after the store is: its reconnect wait is capped", async () => {
    // postgres-js counts failed connects across the pool and waits 3^n / 100 s before the next one
    // (up to 20 s) by default; after an outage of a few seconds the pool stayed away that long.
    const pool = await openStore(fwd.url, { maxConnections: 4 });
    try {
      await pool.query("select 1", []);
      await fwd.cut("refuse");
      let failures = 0;
      const until = Date.now() + 3_000;
      while (Date.now() < until) {
        await pool.query("select 1", []).catch(() => failures++);
        await sleep(20);
      }
      expect(failures).toBeGreaterThan(5);
      await fwd.restore();
      // A bound of 5 s, five times the cap: the default would wait 10–20 s by now.
      expect(await withinDeadline(pool.query("select 1 as one", []), 5_000)).toEqual([{ one: 1 }]);
    } finally {
      await fwd.restore();
      await pool.close();
    }
  });
});
