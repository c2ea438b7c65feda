// `pnpm exec tsx bench/src/x402-record.ts [calls]` (DATABASE_URL): the proxy-side CPU of a streaming
// call's invocation record, free against paid, in process and nothing else (docs/performance.md, x402
// inside MCP tool calls). Free: the deferred record, one INSERT of the final state batched after the
// call (ADR 0006). Paid, verified only: the replay reservation alone, durable, before the dial, then
// the record as a free call's (ADR 0047). Settled: the reservation and the row in one durable
// statement before the dial (money moves before it), then the terminal UPDATE. Calls one after
// another (c=1), 1 ms apart as a relayed call is.

import { setTimeout as sleep } from "node:timers/promises";
import { migrate, openStore } from "@gw/db";
import { createInvocationLifecycle, type InvocationHandle, type NewInvocation } from "@gw/invocations";
import { storesOrExplain } from "./deploy.ts";

const calls = Number(process.argv[2] ?? "1000");
const stores = await storesOrExplain();
if (!stores) process.exit(1);
const store = await openStore(stores.databaseUrl, { syncRecords: false });
await migrate(store);
const life = createInvocationLifecycle({ store });
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

type Variant = "free" | "paid" | "settled";

async function run(v: Variant): Promise<number> {
  const writes: Promise<void>[] = [];
  const t0 = process.cpuUsage();
  for (let i = 0; i < calls; i++) {
    const row = rowOf(i, v !== "free");
    const ref = { tenantId, id: row.id, agentId };
    let record: InvocationHandle;
    const key = `${row.paymentPayer}:${row.id}:${tenantId}`;
    if (v === "paid") {
      await life.reserve(ref, [{ kind: "payment_nonce", scope: "", key }]);
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
  await Promise.all(writes);
  const used = process.cpuUsage(t0);
  return (used.user + used.system) / calls;
}

const got: Record<Variant, number[]> = { free: [], paid: [], settled: [] };
const ORDER: Variant[] = ["free", "paid", "settled"];
for (let r = 0; r < 6; r++) {
  for (const v of r % 2 === 0 ? ORDER : [...ORDER].reverse()) got[v].push(await run(v));
}
const med = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;
for (const v of ORDER) {
  console.log(
    `record CPU per call, µs: ${v} ${got[v].map((x) => x.toFixed(0)).join(" ")} (median ${med(got[v]).toFixed(0)})`,
  );
}
await store.query("delete from reservations where key like $1", [`%:${tenantId}`]);
await store.query("delete from invocations where tenant_id = $1", [tenantId]);
await store.close();
