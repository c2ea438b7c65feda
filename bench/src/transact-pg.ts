// `pnpm exec tsx bench/src/transact-pg.ts [calls] [concurrency] [db2 db3 ...]` (DATABASE_URL): Postgres' own CPU
// per completed transactional call, from the lifecycle's statements alone (the durable pending
// row with its stored request, the claim, the completion), read from /proc for this database's
// backends. CPU time, not throughput: it says what a schema change costs the store even on a
// machine that is busy with other work (docs/performance.md, "The completion as a HOT update").
// Further database names after the first two arguments are measured too, rounds interleaved (an
// A/B of schemas: each database migrated, then changed by hand).
import { readFileSync } from "node:fs";
import { migrate, openStore } from "@gw/db";
import { createInvocationLifecycle, type NewInvocation } from "@gw/invocations";
import { storesOrExplain } from "./deploy.ts";

const calls = Number(process.argv[2] ?? "4000");
const concurrency = Number(process.argv[3] ?? "32");
const stores = await storesOrExplain();
if (!stores) process.exit(1);
const names = [new URL(stores.databaseUrl).pathname.slice(1), ...process.argv.slice(4)];
const targets = await Promise.all(
  names.map(async (name) => {
    const url = new URL(stores.databaseUrl);
    url.pathname = `/${name}`;
    const store = await openStore(url.toString(), { syncRecords: false });
    await migrate(store);
    return { name, store, life: createInvocationLifecycle({ store }), got: [] as number[] };
  }),
);
type Target = (typeof targets)[number];
const tenantId = `bench-transact-pg-${Date.now()}`;
const agentId = `agt_txpg${Date.now()}`;
const TICK_US = 1e6 / 100; // USER_HZ

async function backendCpuUs({ store }: Target): Promise<number> {
  const rows = await store.query("select pid from pg_stat_activity where datname = current_database()", []);
  let ticks = 0;
  for (const { pid } of rows) {
    try {
      const f = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]?.split(" ") ?? [];
      ticks += Number(f[11]) + Number(f[12]);
    } catch {
      // A backend that ended between the query and the read.
    }
  }
  return ticks * TICK_US;
}

async function one({ life }: Target, i: number): Promise<void> {
  const row: NewInvocation & { id: string } = {
    id: `inv_txpg_${Date.now()}_${i}`,
    agentId,
    mode: "transactional",
    status: "pending",
    reqSize: 64,
    createdAt: new Date(),
  };
  const ref = { tenantId, id: row.id, agentId };
  await life.open(tenantId, row, {
    durable: true,
    request: { queue: "bench", job: { a: 1 }, body: Buffer.from('{"bench":true}') },
  });
  await life.claim(ref);
  await life.complete(ref, 200, { latencyMs: 1, respSize: 64, upstreamStatus: 200, completedAt: new Date() });
}

async function round(t: Target): Promise<number> {
  const before = await backendCpuUs(t);
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < calls) await one(t, next++);
    }),
  );
  return ((await backendCpuUs(t)) - before) / calls;
}

for (const t of targets) await round(t); // warm-up
for (let r = 0; r < 5; r++) {
  for (const t of r % 2 === 0 ? targets : [...targets].reverse()) t.got.push(await round(t));
}
for (const t of targets) {
  const sorted = [...t.got].sort((a, b) => a - b);
  console.log(
    `${t.name}: Postgres CPU per completed call, µs: ${t.got.map((x) => x.toFixed(0)).join(" ")} (median ${sorted[2]?.toFixed(0)})`,
  );
  await t.store.query("delete from invocations where tenant_id = $1", [tenantId]);
  await t.store.close();
}
