// `pnpm --filter @gw/bench bench:worker-share`: the worker's share of the 202 figures. The bench's
// split deployment takes the 202 at c=64 and at 500/s open loop twice per round: with the worker
// running, and with it paused (SIGSTOP) during the steps and resumed after. It runs the services'
// last `pnpm build` (run `pnpm bench` or `pnpm build` first). See docs/performance.md.
import { deploy, storesOrExplain } from "./deploy.ts";
import { load } from "./load.ts";
import { openLoop } from "./open-loop.ts";
import { stopAll } from "./procs.ts";
import { benchStore } from "./store.ts";
import { drained } from "./transact.ts";

const stores = await storesOrExplain();
if (!stores) process.exit(1);
const d = await deploy({
  ...stores,
  paths: { echo: "/echo", sink: "/sink", source: "/source", sse: "/sse", transact: "/echo" },
});
const db = await benchStore(stores.databaseUrl);
// This run's own worker (a pattern match could find another deployment's on a shared machine).
const worker = d.workerProc.pid as number;
const headers = { authorization: `Bearer ${d.token}`, "content-type": "application/json" };
const url = `${d.proxy}/v1/proxy/${d.agents.transact}`;
const body = JSON.stringify({ prompt: "hello", n: 1 });
await load({ url, headers, body, connections: 64, seconds: 2 });
await drained(db, d.tenant, d.agents.transact);
for (let r = 0; r < 2; r++) {
  for (const paused of [false, true]) {
    await db.vacuumIfNoAutovacuum();
    if (paused) process.kill(worker, "SIGSTOP");
    const c64 = await load({ url, headers, body, connections: 64, seconds: 5 });
    const ol = await openLoop({ url, headers, body, ratePerSecond: 500, seconds: 5, expectStatus: 202 });
    if (paused) process.kill(worker, "SIGCONT");
    console.log(
      `worker ${paused ? "paused " : "running"}: 202 c=64 ${c64.rps.toFixed(0)}/s p99 ${c64.p99.toFixed(1)} ms; open loop 500/s p50 ${ol.p50.toFixed(2)} p99 ${ol.p99.toFixed(2)} ms`,
    );
    await drained(db, d.tenant, d.agents.transact);
  }
}
await db.removeTenant(d.tenant);
await db.close();
await stopAll();
process.exit(0);
