import { existsSync, readFileSync, statSync } from "node:fs";
import { setTimeout as sleep } from "node:timers/promises";
import type { Deployment } from "./deploy.ts";
import { type Answer, openLoop } from "./open-loop.ts";
import type { Row } from "./report.ts";
import { median, percentile } from "./stats.ts";
import type { BenchStore } from "./store.ts";
import { drained } from "./transact.ts";

/** Where the worker runs during a pass: applied before it (`taskset` on the worker, or nothing). */
export type Layout = { name: string; apply: () => void };

/**
 * The phases of a 202, between the points the proxy's timeline marks (services/proxy/src/timeline.ts)
 * and the caller's own times: [name, from point, to point]; point -2 is when the request was due,
 * -1 when the client sent it, 6 when its answer came.
 */
const PHASES: Array<[string, number, number]> = [
  ["load generator late sending it", -2, -1],
  ["before the proxy read it (kernel, proxy's event loop)", -1, 0],
  ["authentication", 0, 1],
  ["admission (agent, limits, body, policy)", 1, 2],
  ["pending row insert (durable commit)", 2, 3],
  ["enqueue (its synchronous part)", 3, 4],
  ["answer write", 4, 5],
  ["after the answer (to the caller)", 5, 6],
];

type Timed = { total: number; phases: number[] };

/** The proxy's lines written since `offset` (bytes), by invocation id. */
function linesSince(file: string, offset: number): Map<string, number[]> {
  const out = new Map<string, number[]>();
  if (!existsSync(file)) return out;
  const text = readFileSync(file).subarray(offset).toString("utf8");
  for (const line of text.split("\n")) {
    if (!line) continue;
    const { id, t } = JSON.parse(line) as { id: string; t: Array<number | null> };
    if (t.every((x) => x !== null)) out.set(id, t as number[]);
  }
  return out;
}

function timed(answers: Answer[], proxy: Map<string, number[]>): Timed[] {
  const out: Timed[] = [];
  for (const a of answers) {
    const t = proxy.get(a.id);
    if (!t) continue;
    const at = (i: number) =>
      i === -2 ? a.from : i === -1 ? a.sent : i >= t.length ? a.to : (t[i] as number);
    out.push({ total: a.to - a.from, phases: PHASES.map(([, f, to]) => at(to) - at(f)) });
  }
  return out;
}

/**
 * Where the 202's tail goes (docs/performance.md): the open loop at `rate` with the proxy's
 * timeline on, once per layout per round (rounds interleaved), then for the slowest 1 % of each
 * layout's requests the median share of each phase in their latency, beside the same for all.
 */
export async function tailRows(
  d: Deployment,
  db: BenchStore,
  o: {
    file: string;
    body: string;
    rate: number;
    seconds: number;
    rounds: number;
    layouts: Layout[];
    vacuumed: () => Promise<void>;
  },
): Promise<Row[]> {
  const auth = { authorization: `Bearer ${d.token}`, "content-type": "application/json" };
  const slow = new Map<string, Timed[]>(o.layouts.map((l) => [l.name, []]));
  const all = new Map<string, Timed[]>(o.layouts.map((l) => [l.name, []]));
  const p99s = new Map<string, number[]>(o.layouts.map((l) => [l.name, []]));
  const p50s = new Map<string, number[]>(o.layouts.map((l) => [l.name, []]));
  // Warm-up, not counted: the first pass of a fresh proxy also measures its JIT and its pools.
  await openLoop({
    url: `${d.proxy}/v1/proxy/${d.agents.transact}`,
    headers: auth,
    body: o.body,
    ratePerSecond: o.rate,
    seconds: 2,
    expectStatus: 202,
  });
  await drained(db, d.tenant, d.agents.transact);
  for (let r = 0; r < o.rounds; r++) {
    for (const layout of o.layouts) {
      layout.apply();
      await o.vacuumed();
      const offset = existsSync(o.file) ? statSync(o.file).size : 0;
      const answers: Answer[] = [];
      const res = await openLoop({
        url: `${d.proxy}/v1/proxy/${d.agents.transact}`,
        headers: auth,
        body: o.body,
        ratePerSecond: o.rate,
        seconds: o.seconds,
        expectStatus: 202,
        answers,
      });
      await drained(db, d.tenant, d.agents.transact);
      // The proxy writes its lines every 250 ms.
      await sleep(600);
      const rows = timed(answers, linesSince(o.file, offset)).sort((a, b) => b.total - a.total);
      // The slowest 1 % of this pass (each pass its own, so one noisy pass cannot fill the set).
      slow.get(layout.name)?.push(...rows.slice(0, Math.max(1, Math.floor(rows.length / 100))));
      all.get(layout.name)?.push(...rows);
      p50s.get(layout.name)?.push(res.p50);
      p99s.get(layout.name)?.push(res.p99);
    }
  }
  for (const layout of o.layouts)
    printTimeline(layout.name, slow.get(layout.name) ?? [], all.get(layout.name) ?? []);
  return o.layouts.flatMap((l) => [
    {
      scenario: "transactional",
      metric: `202 latency p50 open loop ${o.rate}/s, timeline on: ${l.name}`,
      unit: "ms",
      direct: null,
      bare: null,
      gateway: median(p50s.get(l.name) ?? []),
    },
    {
      scenario: "transactional",
      metric: `202 latency p99 open loop ${o.rate}/s, timeline on: ${l.name}`,
      unit: "ms",
      direct: null,
      bare: null,
      gateway: median(p99s.get(l.name) ?? []),
    },
  ]);
}

/** One layout's table: per phase, the median ms and share in the slowest 1 %, and in all requests. */
function printTimeline(name: string, slow: Timed[], all: Timed[]): void {
  const shareOf = (xs: Timed[], i: number) =>
    median(xs.map((x) => (100 * (x.phases[i] as number)) / Math.max(x.total, 1e-9)));
  const msOf = (xs: Timed[], i: number) => median(xs.map((x) => x.phases[i] as number));
  console.log(
    `\n202 timeline, ${name}: ${all.length} answers joined; slowest 1 %: ${slow.length} (latency median ${median(slow.map((x) => x.total)).toFixed(2)} ms, all: p50 ${median(all.map((x) => x.total)).toFixed(2)} ms, p99 ${percentile(
      all.map((x) => x.total),
      99,
    ).toFixed(2)} ms)`,
  );
  console.log(`  ${"phase".padEnd(64)}  slowest 1 %: median ms  share | all: median ms  share`);
  PHASES.forEach(([phase], i) => {
    console.log(
      `  ${phase.padEnd(64)}  ${msOf(slow, i).toFixed(2).padStart(20)}  ${shareOf(slow, i).toFixed(0).padStart(4)} % | ${msOf(all, i).toFixed(2).padStart(13)}  ${shareOf(all, i).toFixed(0).padStart(4)} %`,
    );
  });
}
