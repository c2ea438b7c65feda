// The scale rows of `pnpm bench` (docs/performance.md): the proxy's CPU per small streaming call
// and per 202 with an empty store, then again once the run's tenant has 10,000 agents and the store
// 1,000,000 invocation rows (seeded in SQL with generate_series), beside each other. Nothing a call
// does may grow with what is stored: target within +10 %.
import type { Deployment } from "./deploy.ts";
import { load } from "./load.ts";
import { cpuMsOf, quiet } from "./procs.ts";
import type { Row } from "./report.ts";
import { median } from "./stats.ts";
import type { BenchStore } from "./store.ts";
import { drained } from "./transact.ts";

export const SCALE = { agents: 10_000, invocations: 1_000_000 };

type Sample = { stream: number[]; accepted: number[] };

export async function scaleRows(
  d: Deployment,
  db: BenchStore,
  p: { rounds: number; seconds: number; concurrency: number; body: string; vacuumed: () => Promise<void> },
): Promise<Row[]> {
  const pid = d.proxyProc.pid as number;
  const headers = { authorization: `Bearer ${d.token}`, "content-type": "application/json" };
  const cpuPer = async (url: string) => {
    const before = cpuMsOf(pid);
    const res = await load({ url, headers, body: p.body, connections: p.concurrency, seconds: p.seconds });
    if (res.errors > 0 || res.requests === 0) throw new Error(`scale: ${res.errors} failed requests`);
    return ((cpuMsOf(pid) - before) * 1000) / res.requests;
  };
  const stream = `${d.proxy}/v1/proxy/${d.agents.echo}/stream`;
  const transact = `${d.proxy}/v1/proxy/${d.agents.transact}`;
  const measure = async (): Promise<Sample> => {
    const s: Sample = { stream: [], accepted: [] };
    await load({ url: stream, headers, body: p.body, connections: p.concurrency, seconds: 1 }); // warm-up
    for (let r = 0; r < p.rounds; r++) {
      await p.vacuumed();
      await quiet();
      s.stream.push(await cpuPer(stream));
      await quiet();
      s.accepted.push(await cpuPer(transact));
      await drained(db, d.tenant, d.agents.transact);
    }
    return s;
  };
  const empty = await measure();
  console.log(`scale: seeding ${SCALE.agents} agents and ${SCALE.invocations} invocations ...`);
  await db.seed(d.tenant, SCALE);
  const full = await measure();
  const row = (metric: string, a: number[], b: number[]): Row => {
    const [e, f] = [median(a), median(b)];
    return {
      scenario: "scale",
      metric: `${metric} (bare: empty store; gateway: ${SCALE.agents} agents, ${SCALE.invocations} rows)`,
      unit: "µs",
      direct: null,
      bare: e,
      gateway: f,
      target: { text: "<= empty + 10 %", met: f <= e * 1.1 },
    };
  };
  return [
    row(`proxy CPU per streaming call c=${p.concurrency}`, empty.stream, full.stream),
    row(`proxy CPU per 202 c=${p.concurrency}`, empty.accepted, full.accepted),
  ];
}
