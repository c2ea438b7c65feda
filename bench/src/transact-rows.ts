import type { Deployment } from "./deploy.ts";
import { type LoadResult, load } from "./load.ts";
import { type OpenLoopResult, openLoop } from "./open-loop.ts";
import { cpuMsByRole, cpuMsOf } from "./procs.ts";
import type { Row } from "./report.ts";
import { median } from "./stats.ts";
import type { BenchStore, WalShare } from "./store.ts";
import { drained, endToEnd } from "./transact.ts";

/**
 * The transactional step of `pnpm bench` (docs/performance.md): the 202 under closed-loop load,
 * completed invocations end to end with each role's CPU, the WAL and the HOT share per completed
 * call, the 202 at a fixed arrival rate (open loop), and the poll of a finished call.
 */
export async function transactRows(
  d: Deployment,
  db: BenchStore,
  o: {
    body: string;
    concurrency: number;
    seconds: number;
    rounds: number;
    /** Offered arrival rate of the open-loop part (target: 202 p99 <= 5 ms at 500/s). */
    openRate: number;
    /** Before each measured part: what autovacuum would have done by then, where it is off. */
    vacuumed: () => Promise<void>;
  },
): Promise<Row[]> {
  const auth = { authorization: `Bearer ${d.token}` };
  const spec = (url: string) => ({
    url,
    headers: { ...auth, "content-type": "application/json" },
    body: o.body,
    connections: o.concurrency,
    seconds: o.seconds,
  });
  const accepted: LoadResult[] = [];
  const direct202: LoadResult[] = [];
  const e2e: number[] = [];
  const e2eDirect: number[] = [];
  let e2eCount = 0;
  // Postgres's write work per completed call (WAL bytes): steadier than CPU on a shared machine.
  const walPerInvocation: number[] = [];
  // The same, counting only WAL records of this database's relations (other databases excluded).
  const walOwnPerInvocation: number[] = [];
  let walShares: WalShare[] | null = null;
  let walSharesOf = 0;
  // Updates of invocation rows per completed call, and the share of them that were HOT.
  const updatesPerInvocation: number[] = [];
  const hotShare: number[] = [];
  // Where a completed invocation's CPU goes on this machine (every process of each role).
  const cpuPerInvocation = new Map<string, number[]>();
  const transactSpec = spec(`${d.proxy}/v1/proxy/${d.agents.transact}`);
  for (let r = 0; r < o.rounds; r++) {
    direct202.push(await load(spec(`${d.upstream}/echo`)));
    await o.vacuumed();
    accepted.push(await load(transactSpec));
    await drained(db, d.tenant, d.agents.transact);
    await o.vacuumed();
    // Postgres: the backends of the bench's database only (the server may serve others meanwhile).
    const backends = await db.backendPids();
    const before = cpuMsByRole(undefined, backends);
    const walBefore = await db.walBytes();
    const updBefore = await db.invocationUpdates();
    let after = before;
    const run = await endToEnd({
      proxy: d.proxy,
      store: db,
      tenantId: d.tenant,
      agentId: d.agents.transact,
      token: d.token,
      seconds: o.seconds,
      concurrency: o.concurrency,
      onCompleted: () => {
        after = cpuMsByRole(undefined, backends);
      },
    });
    e2e.push(run.perSecond);
    e2eCount += run.succeeded;
    const walAfter = await db.walBytes();
    walPerInvocation.push((walAfter - walBefore) / run.succeeded);
    const own = await db.walOfDatabase(walBefore, walAfter);
    if (own !== null) walOwnPerInvocation.push(own / run.succeeded);
    // Where that WAL went (the final measuring pass's, printed with the table): which relation, which record.
    walShares = await db.walByRelation(walBefore, walAfter);
    walSharesOf = run.succeeded;
    // Table statistics reach the shared counters within a second of a transaction's end.
    await new Promise((r) => setTimeout(r, 1_100));
    const updAfter = await db.invocationUpdates();
    const updated = updAfter.updated - updBefore.updated;
    updatesPerInvocation.push(updated / run.succeeded);
    hotShare.push(updated > 0 ? (100 * (updAfter.hot - updBefore.hot)) / updated : 0);
    // Direct: calls straight to the upstream complete when answered (the 202 step's direct run).
    e2eDirect.push(direct202[r]?.rps ?? 0);
    for (const [role, ms] of after) {
      const per = cpuPerInvocation.get(role) ?? [];
      per.push((1000 * (ms - (before.get(role) ?? 0))) / run.succeeded);
      cpuPerInvocation.set(role, per);
    }
  }
  if (accepted.some((a) => a.errors > 0)) throw new Error("transactional: failed submissions");
  if (walShares && walSharesOf > 0) {
    const per = (b: number) => (b / walSharesOf).toFixed(1).padStart(8);
    console.log(
      "WAL of this database per completed invocation (final measuring pass), by relation and record:",
    );
    for (const w of walShares.filter((x) => x.bytes / walSharesOf >= 1))
      console.log(
        `  ${per(w.bytes)} bytes (full-page images ${per(w.fpiBytes)}; ${(w.count / walSharesOf).toFixed(2)} records)  ${w.relation} ${w.record}`,
      );
  }
  // The 202 at a fixed arrival rate (open loop): what a caller sees at a steady offered load.
  const open: OpenLoopResult[] = [];
  const openDirect: OpenLoopResult[] = [];
  for (let r = 0; r < o.rounds; r++) {
    const common = {
      headers: { "content-type": "application/json" },
      body: o.body,
      seconds: o.seconds,
    };
    openDirect.push(
      await openLoop({ ...common, url: `${d.upstream}/echo`, ratePerSecond: o.openRate, expectStatus: 200 }),
    );
    await o.vacuumed();
    open.push(
      await openLoop({
        ...common,
        headers: { ...common.headers, ...auth },
        url: `${d.proxy}/v1/proxy/${d.agents.transact}`,
        ratePerSecond: o.openRate,
        expectStatus: 202,
      }),
    );
    await drained(db, d.tenant, d.agents.transact);
  }
  // A shared machine can make the odd submission fail: counted in the row, not the end of the run.
  const openErrors = open.reduce((n, a) => n + a.errors, 0);
  // The poll of a finished call, as a client polls for its answer: throughput and proxy CPU.
  const polls: LoadResult[] = [];
  const pollCpu: number[] = [];
  const submitted = await fetch(`${d.proxy}/v1/proxy/${d.agents.transact}`, {
    method: "POST",
    headers: { ...auth, "content-type": "application/json" },
    body: o.body,
  });
  const { invocation_id: polled } = (await submitted.json()) as { invocation_id: string };
  await drained(db, d.tenant, d.agents.transact);
  for (let r = 0; r < o.rounds; r++) {
    const before = cpuMsOf(d.proxyProc.pid as number);
    const res = await load({
      url: `${d.proxy}/v1/proxy/${d.agents.transact}/invocations/${polled}`,
      headers: auth,
      connections: o.concurrency,
      seconds: o.seconds,
    });
    if (res.errors > 0) throw new Error(`poll: ${res.errors} failed requests`);
    pollCpu.push(((cpuMsOf(d.proxyProc.pid as number) - before) * 1000) / res.requests);
    polls.push(res);
  }
  const openP99 = median(open.map((a) => a.p99));
  const p99 = median(accepted.map((a) => a.p99));
  const perSecond = median(e2e);
  return [
    {
      scenario: "transactional",
      metric: `202 throughput c=${o.concurrency}`,
      unit: "req/s",
      direct: median(direct202.map((a) => a.rps)),
      bare: null,
      gateway: median(accepted.map((a) => a.rps)),
      target: { text: ">= 3000 req/s", met: median(accepted.map((a) => a.rps)) >= 3000 },
    },
    {
      scenario: "transactional",
      metric: `202 latency p50 c=${o.concurrency}`,
      unit: "ms",
      direct: median(direct202.map((a) => a.p50)),
      bare: null,
      gateway: median(accepted.map((a) => a.p50)),
    },
    {
      scenario: "transactional",
      metric: `202 latency p99 c=${o.concurrency}`,
      unit: "ms",
      direct: median(direct202.map((a) => a.p99)),
      bare: null,
      gateway: p99,
    },
    {
      scenario: "transactional",
      metric: `202 latency p50 open loop ${o.openRate}/s`,
      unit: "ms",
      direct: median(openDirect.map((a) => a.p50)),
      bare: null,
      gateway: median(open.map((a) => a.p50)),
    },
    {
      scenario: "transactional",
      metric: `202 latency p99 open loop ${o.openRate}/s${openErrors > 0 ? ` (${openErrors} failed submissions)` : ""}`,
      unit: "ms",
      direct: median(openDirect.map((a) => a.p99)),
      bare: null,
      gateway: openP99,
      target: { text: "p99 <= 5 ms", met: openP99 <= 5 },
    },
    {
      scenario: "transactional",
      metric: `completed end to end (c=${o.concurrency}, ${Math.round(e2eCount / o.rounds)} per round)`,
      unit: "inv/s",
      direct: median(e2eDirect),
      bare: null,
      gateway: perSecond,
      target: { text: ">= 0.1 x direct", met: perSecond >= 0.1 * median(e2eDirect) },
    },
    {
      scenario: "transactional",
      metric: `poll of a finished call: throughput c=${o.concurrency}`,
      unit: "req/s",
      direct: null,
      bare: null,
      gateway: median(polls.map((x) => x.rps)),
    },
    {
      scenario: "transactional",
      metric: `poll of a finished call: proxy CPU per poll c=${o.concurrency}`,
      unit: "µs",
      direct: null,
      bare: null,
      gateway: median(pollCpu),
    },
    {
      scenario: "transactional",
      metric: "WAL written per completed invocation",
      unit: "bytes",
      direct: null,
      bare: null,
      gateway: median(walPerInvocation),
    },
    {
      scenario: "transactional",
      metric: "WAL per completed invocation, this database's relations only (pg_walinspect)",
      unit: "bytes",
      direct: null,
      bare: null,
      gateway: walOwnPerInvocation.length > 0 ? median(walOwnPerInvocation) : Number.NaN,
      target:
        walOwnPerInvocation.length > 0
          ? { text: "<= 2500 bytes", met: median(walOwnPerInvocation) <= 2500 }
          : undefined,
    },
    {
      scenario: "transactional",
      metric: `updates of the invocation row per completed invocation (HOT: ${median(hotShare).toFixed(0)} %)`,
      unit: "updates",
      direct: null,
      bare: null,
      gateway: median(updatesPerInvocation),
    },
    ...[...cpuPerInvocation].map(([role, per]) => ({
      scenario: "transactional",
      metric: `CPU per completed invocation: ${role}`,
      unit: "µs",
      direct: null,
      bare: null,
      gateway: median(per),
    })),
  ];
}
