// `pnpm exec tsx bench/src/x402-record.ts [calls] [c]` (DATABASE_URL): the proxy-side CPU of a streaming
// call's invocation record, free against paid, in process and nothing else (docs/performance.md, x402
// inside MCP tool calls). Free: the deferred record, one INSERT of the final state batched after the
// call (ADR 0006). Paid, verified only: the replay reservation alone, durable, before the dial, then
// the record as a free call's (ADR 0047). Settled: the reservation and the row in one durable
// statement before the dial (money moves before it), then the terminal UPDATE. Paid, each nonce
// alone: the reservation as it was before it was group-committed (ADR 0051), one statement per call.
// `c` callers (default 1), each call after the caller's previous one, 1 ms apart as a relayed call is.

import { setTimeout as sleep } from "node:timers/promises";
import { migrate, openStore } from "@gw/db";
import { createInvocationLifecycle, type InvocationHandle, type NewInvocation } from "@gw/invocations";
// The statement a nonce took before it was group-committed, as the lifecycle bounded it, to compare in one process.
import { reserve as reserveAlone } from "../../packages/invocations/src/repos/invocation-reservations.ts";
import { withDeadline } from "../../packages/invocations/src/store-faults.ts";
import { storesOrExplain } from "./deploy.ts";

const calls = Number(process.argv[2] ?? "1000");
const concurrency = Number(process.argv[3] ?? "1");
const stores = await storesOrExplain();
if (!stores) process.exit(1);
const store = await openStore(stores.databaseUrl, { syncRecords: false });
await migrate(store);
// Every statement the lifecycle sends is counted: a round trip of the proxy's, a commit of the store's.
let statements = 0;
const counted =
  (query: typeof store.query): typeof store.query =>
  (text, params) => {
    statements++;
    return query(text, params);
  };
const life = createInvocationLifecycle({
  store: { query: counted(store.query), recordsQuery: counted(store.recordsQuery) },
});
const tenantId = `bench-x402-record-${Date.now()}`;
const agentId = `agt_x402rec${Date.now()}`;
const FACTS = { latencyMs: 1, respSize: 100, upstreamStatus: 200, completedAt: new Date() };

const rowOf = (i: number, paid: boolean): NewInvocation & { id: string } => ({
  id: `inv_x402rec_${paid ? "p" : "f"}_${Date.now()}_${i}`,
  agentId,
  mode: "streaming",
  status: "running",
  mcpMethod: "tools/call",
  mcpTool: "search",
  reqSize: 120,
  startedAt: new Date(),
  createdAt: new Date(),
  ...(paid
    ? {
        paymentNetwork: "base-sepolia",
        paymentAsset: "0x036CbD53842c5426634e7929541eC2318f3dCF7e",
        paymentAmount: "1000",
        paymentPayer: "0x76ed2fdddacc7e8c68c11d3b73a1527045ebade1",
        paymentNonce: `0x${String(i).padStart(64, "0")}`,
      }
    : {}),
  instanceId: "bench",
});

type Variant = "free" | "paid" | "paid, each nonce alone" | "settled";

async function run(v: Variant): Promise<number> {
  const writes: Promise<void>[] = [];
  const s0 = statements;
  const t0 = process.cpuUsage();
  let next = 0;
  const caller = async () => {
    for (let i = next++; i < calls; i = next++) await one(v, i, writes);
  };
  await Promise.all(Array.from({ length: concurrency }, caller));
  await Promise.all(writes);
  const used = process.cpuUsage(t0);
  statementsPerCall[v].push((statements - s0) / calls);
  return (used.user + used.system) / calls;
}

async function one(v: Variant, i: number, writes: Promise<void>[]): Promise<void> {
  const row = rowOf(i, v !== "free");
  const ref = { tenantId, id: row.id, agentId };
  let record: InvocationHandle;
  const key = `${row.paymentPayer}:${row.id}:${tenantId}`;
  if (v === "paid") {
    await life.reserve(ref, [{ kind: "payment_nonce", scope: "", key }]);
    record = life.openDeferred(row, ref, 1_000);
  } else if (v === "paid, each nonce alone") {
    const keys = [{ kind: "payment_nonce" as const, scope: "", key }];
    await withDeadline(reserveAlone(counted(store.query), ref.id, keys), 1_500, () => {});
    record = life.openDeferred(row, ref, 1_000);
  } else if (v === "settled") {
    await life.open(tenantId, row, {
      durable: true,
      reservations: [{ kind: "payment_nonce", scope: "", key }],
    });
    record = life.handle(ref);
  } else {
    record = life.openDeferred(row, ref, 1_000);
  }
  await sleep(1);
  writes.push(record.complete(200, FACTS));
}

const ORDER: Variant[] = ["free", "paid", "paid, each nonce alone", "settled"];
const got = Object.fromEntries(ORDER.map((v) => [v, [] as number[]])) as Record<Variant, number[]>;
const statementsPerCall = Object.fromEntries(ORDER.map((v) => [v, [] as number[]])) as Record<
  Variant,
  number[]
>;
for (let r = 0; r < 6; r++) {
  for (const v of r % 2 === 0 ? ORDER : [...ORDER].reverse()) got[v].push(await run(v));
}
const med = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;
for (const v of ORDER) {
  console.log(
    `record CPU per call, µs, c=${concurrency}: ${v} ${got[v].map((x) => x.toFixed(0)).join(" ")} (median ${med(got[v]).toFixed(0)}); statements per call ${med(statementsPerCall[v]).toFixed(2)}`,
  );
}
await store.query("delete from reservations where key like $1", [`%:${tenantId}`]);
await store.query("delete from invocations where tenant_id = $1", [tenantId]);
await store.close();
