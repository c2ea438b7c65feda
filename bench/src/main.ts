// `pnpm bench [--quick] [--no-build] [--profile] [--json <file>] [--only stream,oauth,policy,quota,a2a,transact,transfer,sse,tools,guard,virtual,virtual-v1,audit,scale]`: the split deployment against a
// direct upstream and a bare Node proxy, side by side in one run. See docs/performance.md.
import { mkdirSync, writeFileSync } from "node:fs";
import { cpus } from "node:os";
import { join } from "node:path";
import { a2aRows } from "./a2a.ts";
import { auditRows } from "./audit.ts";
import { build, type Deployment, deploy, storesOrExplain } from "./deploy.ts";
import { answerGuardRows } from "./guard.ts";
import { generatorName, type LoadResult, load } from "./load.ts";
import { oauthCpu } from "./oauth.ts";
import { type OpenLoopResult, openLoop } from "./open-loop.ts";
import { evaluationMicros, POLICY_VARIANTS, type PolicyVariant, policyTenants } from "./policy.ts";
import { cpuMsByRole, cpuMsOf, quiet, ROOT, stop, stopAll } from "./procs.ts";
import { quotaRows } from "./quota.ts";
import type { Row } from "./report.ts";
import { table, withRatios } from "./report.ts";
import { scaleRows } from "./scale.ts";
import { sseDelays } from "./sse.ts";
import { median, percentile } from "./stats.ts";
import { benchStore, type WalShare } from "./store.ts";
import { toolListRows } from "./tools.ts";
import { drained, endToEnd } from "./transact.ts";
import { download, upload } from "./transfer.ts";
import { virtualRows } from "./virtual.ts";
import { virtualV1Rows } from "./virtual-v1.ts";

const argv = process.argv.slice(2);
const quick = argv.includes("--quick");
const jsonAt = argv.indexOf("--json");
const P = quick
  ? { rounds: 1, seconds: 2, latSeconds: 1, bytes: 256 * 2 ** 20, sseEvents: 100, sseStreams: 4 }
  : { rounds: 3, seconds: 5, latSeconds: 3, bytes: 2 ** 30, sseEvents: 400, sseStreams: 4 };
const onlyAt = argv.indexOf("--only");
/** `--only stream,oauth,policy,quota,a2a,transact,transfer,sse,tools,guard,virtual,virtual-v1,audit,scale`: run just those sections (for iterating on one figure). */
const only = onlyAt >= 0 ? new Set((argv[onlyAt + 1] ?? "").split(",")) : null;
const want = (section: string) => only === null || only.has(section);
const CONCURRENCY = 64;
/** Offered arrival rate of the transactional open-loop step (target: 202 p99 <= 5 ms at 500/s). */
const OPEN_RATE = 500;
const SMALL_BODY = JSON.stringify({ prompt: "hello", n: 1 });
const SSE_EVERY_MS = 5;
const results = join(ROOT, "bench", "results");
const profileDir = argv.includes("--profile") ? join(results, `prof-${Date.now()}`) : undefined;

type Target = "direct" | "bare" | "gateway";
const TARGETS: Target[] = ["direct", "bare", "gateway"];
/** Each round starts with a different target, so no one of them always runs first or last. */
const order = (round: number) => TARGETS.map((_, i) => TARGETS[(i + round) % TARGETS.length] as Target);

async function main(): Promise<number> {
  const stores = await storesOrExplain();
  if (!stores) return 1;
  if (!argv.includes("--no-build")) {
    console.log("building the services (pnpm build) ...");
    build();
  }
  console.log(`load generator: ${generatorName()}; ${cpus().length} CPUs; ${quick ? "quick" : "full"} run`);
  const d = await deploy({
    ...stores,
    profileDir,
    paths: {
      echo: "/echo",
      sink: "/sink",
      source: `/source?bytes=${P.bytes}`,
      sse: `/sse?n=${P.sseEvents}&every=${SSE_EVERY_MS}`,
      transact: "/echo",
    },
  });
  const db = await benchStore(stores.databaseUrl);
  // Before each measured step: what autovacuum would have done by then, where it is off.
  const vacuumed = async () => {
    if ((await db.vacuumIfNoAutovacuum()) && !saidVacuum) {
      saidVacuum = true;
      console.log(
        "Postgres runs without autovacuum: the bench vacuums the invocation tables before each step",
      );
    }
  };
  let saidVacuum = false;
  const auth = { authorization: `Bearer ${d.token}` };
  const url = (t: Target, agent: keyof Deployment["agents"], path: string) =>
    t === "direct"
      ? `${d.upstream}${path}`
      : t === "bare"
        ? `${d.bare}${path}`
        : `${d.proxy}/v1/proxy/${d.agents[agent]}/stream`;
  const pid = (t: Target) => (t === "bare" ? d.bareProc.pid : t === "gateway" ? d.proxyProc.pid : undefined);
  const rows: Row[] = [];

  const spec = (t: Target, connections: number, seconds: number) => ({
    url: url(t, "echo", "/echo"),
    headers: { ...auth, "content-type": "application/json" },
    body: SMALL_BODY,
    connections,
    seconds,
  });

  // 1. Small request/response through the streaming endpoint.
  if (want("stream")) {
    console.log("1/4 small bodies, streaming endpoint ...");
    await vacuumed();
    for (const t of TARGETS) await load(spec(t, CONCURRENCY, 1)); // warm-up: JIT, pools, caches
    const loaded: Record<Target, LoadResult[]> = { direct: [], bare: [], gateway: [] };
    const single: Record<Target, LoadResult[]> = { direct: [], bare: [], gateway: [] };
    // The proxy process's CPU per call under load (bare proxy and gateway), µs.
    const cpu: Record<Target, number[]> = { direct: [], bare: [], gateway: [] };
    for (let r = 0; r < P.rounds; r++) {
      for (const t of order(r)) {
        const p = pid(t);
        const before = p === undefined ? 0 : cpuMsOf(p);
        const res = await load(spec(t, CONCURRENCY, P.seconds));
        if (p !== undefined && res.requests > 0) cpu[t].push(((cpuMsOf(p) - before) * 1000) / res.requests);
        loaded[t].push(res);
        // A lone caller meets an idle gateway: the c=64 step's records and garbage are dealt with first.
        await quiet();
        single[t].push(await load(spec(t, 1, P.latSeconds)));
      }
    }
    const errors = TARGETS.flatMap((t) => [...loaded[t], ...single[t]]).reduce((n, x) => n + x.errors, 0);
    if (errors > 0) throw new Error(`small bodies: ${errors} failed requests`);
    const m = (set: Record<Target, LoadResult[]>, t: Target, k: "rps" | "p50" | "p99") =>
      median(set[t].map((x) => x[k]));
    const gwRps = m(loaded, "gateway", "rps");
    rows.push(
      {
        scenario: "stream small",
        metric: `throughput c=${CONCURRENCY}`,
        unit: "req/s",
        direct: m(loaded, "direct", "rps"),
        bare: m(loaded, "bare", "rps"),
        gateway: gwRps,
        target: { text: ">= 0.75 x bare", met: gwRps >= 0.75 * m(loaded, "bare", "rps") },
      },
      {
        scenario: "stream small",
        metric: `proxy CPU per call c=${CONCURRENCY}`,
        unit: "µs",
        direct: null,
        bare: median(cpu.bare),
        gateway: median(cpu.gateway),
        target: { text: "<= 1.4 x bare", met: median(cpu.gateway) <= 1.4 * median(cpu.bare) },
      },
      ...(["p50", "p99"] as const).map((k) => ({
        scenario: "stream small",
        metric: `latency ${k} c=${CONCURRENCY}`,
        unit: "ms",
        direct: m(loaded, "direct", k),
        bare: m(loaded, "bare", k),
        gateway: m(loaded, "gateway", k),
      })),
      ...(["p50", "p99"] as const).map((k) => {
        const added = m(single, "gateway", k) - m(single, "direct", k);
        const bareAdded = m(single, "bare", k) - m(single, "direct", k);
        // Each round's own added figure, gateway and bare proxy: the spread the target is read against.
        const spread = (t: Target) => {
          const perRound = single[t].map((x, r) => x[k] - (single.direct[r]?.[k] ?? 0));
          return `${Math.min(...perRound).toFixed(2)}–${Math.max(...perRound).toFixed(2)}`;
        };
        return {
          scenario: "stream small",
          metric: `latency ${k} c=1 (added: gateway ${added.toFixed(2)} [${spread("gateway")}], bare ${bareAdded.toFixed(2)} [${spread("bare")}] ms)`,
          unit: "ms",
          direct: m(single, "direct", k),
          bare: m(single, "bare", k),
          gateway: m(single, "gateway", k),
          // p50: at most 1 ms added; p99: at most 1 ms over the bare proxy's own (noise any Node proxy has).
          target:
            k === "p50"
              ? { text: "added p50 <= 1 ms", met: added <= 1 }
              : { text: "added p99 <= bare's + 1 ms", met: added <= bareAdded + 1 },
        };
      }),
    );
  }

  // 1b. The same small calls with a cached OAuth credential against a static bearer one.
  if (want("oauth")) {
    console.log("1b/4 OAuth credential against a static bearer, streaming endpoint ...");
    rows.push(
      await oauthCpu(d, {
        path: "/echo",
        body: SMALL_BODY,
        connections: CONCURRENCY,
        seconds: P.seconds,
        rounds: Math.max(2, P.rounds),
      }),
    );
  }

  // 1c. Policy on the streaming path: CPU per call without a document, with 20 match-only rules and
  // with 20 CEL rules (all evaluated: none holds), one tenant each, rounds interleaved.
  if (want("policy")) {
    console.log("1c/4 policy: none, 20 rules, 20 CEL rules ...");
    const tenants = await policyTenants(d, "/echo");
    const policySpec = (v: PolicyVariant, seconds: number) => ({
      url: `${d.proxy}/v1/proxy/${tenants[v].agentId}/stream`,
      headers: { authorization: `Bearer ${tenants[v].token}`, "content-type": "application/json" },
      body: SMALL_BODY,
      connections: CONCURRENCY,
      seconds,
    });
    for (const v of POLICY_VARIANTS) await load(policySpec(v, 1)); // warm-up: caches, JIT
    const perCall: Record<PolicyVariant, number[]> = { none: [], rules: [], cel: [] };
    const proxyPid = d.proxyProc.pid as number;
    for (let r = 0; r < P.rounds * 2; r++) {
      for (let i = 0; i < POLICY_VARIANTS.length; i++) {
        const v = POLICY_VARIANTS[(i + r) % POLICY_VARIANTS.length] as PolicyVariant;
        await quiet();
        const before = cpuMsOf(proxyPid);
        const res = await load(policySpec(v, P.seconds));
        if (res.errors > 0 || res.requests === 0)
          throw new Error(`policy ${v}: ${res.errors} failed requests`);
        perCall[v].push(((cpuMsOf(proxyPid) - before) * 1000) / res.requests);
      }
    }
    const none = median(perCall.none);
    const rules = median(perCall.rules);
    const cel = median(perCall.cel);
    rows.push(
      {
        scenario: "stream policy",
        metric: "proxy CPU per call, no policy",
        unit: "µs",
        direct: null,
        bare: null,
        gateway: none,
      },
      {
        scenario: "stream policy",
        metric: `proxy CPU per call, 20 match rules (+${(rules - none).toFixed(1)} µs)`,
        unit: "µs",
        direct: null,
        bare: null,
        gateway: rules,
      },
      {
        scenario: "stream policy",
        metric: `proxy CPU per call, 20 CEL rules (+${(cel - none).toFixed(1)} µs vs none, +${(cel - rules).toFixed(1)} vs match rules)`,
        unit: "µs",
        direct: null,
        bare: null,
        gateway: cel,
        target: { text: "<= none + 15 µs", met: cel - none <= 15 },
      },
    );
    const evaluation = evaluationMicros();
    rows.push({
      scenario: "stream policy",
      metric: `evaluation per call in-process, 20 CEL rules (20 match rules: ${evaluation.rules.toFixed(2)} µs)`,
      unit: "µs",
      direct: null,
      bare: null,
      gateway: evaluation.cel,
      target: { text: "<= 15 µs", met: evaluation.cel <= 15 },
    });
  }

  // 1d. Quotas: the same policy without limit rules, with 5 leased and with 5 exact ones.
  if (want("quota")) {
    console.log("1d/4 quotas: no limit rules, 5 leased, 5 exact ...");
    rows.push(
      ...(await quotaRows(d, {
        path: "/echo",
        body: SMALL_BODY,
        connections: CONCURRENCY,
        seconds: P.seconds,
        rounds: P.rounds,
        redisUrl: stores.redisUrl,
      })),
    );
  }

  // 1e. A2A: SendMessage and a streamed task through an a2a agent beside an http agent.
  if (want("a2a")) {
    console.log("1e/4 A2A: SendMessage and a streamed task, a2a agent beside an http agent ...");
    rows.push(...(await a2aRows(d, { connections: CONCURRENCY, seconds: P.seconds, rounds: P.rounds })));
  }

  // 2. Transactional: the 202 under load, then completed invocations end to end.
  if (want("transact")) {
    console.log("2/4 transactional ...");
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
    const transactSpec = {
      ...spec("gateway", CONCURRENCY, P.seconds),
      url: `${d.proxy}/v1/proxy/${d.agents.transact}`,
    };
    for (let r = 0; r < P.rounds; r++) {
      direct202.push(await load(spec("direct", CONCURRENCY, P.seconds)));
      await vacuumed();
      accepted.push(await load(transactSpec));
      await drained(db, d.tenant, d.agents.transact);
      await vacuumed();
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
        seconds: P.seconds,
        concurrency: CONCURRENCY,
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
    for (let r = 0; r < P.rounds; r++) {
      const common = {
        headers: { "content-type": "application/json" },
        body: SMALL_BODY,
        seconds: P.seconds,
      };
      openDirect.push(
        await openLoop({ ...common, url: `${d.upstream}/echo`, ratePerSecond: OPEN_RATE, expectStatus: 200 }),
      );
      await vacuumed();
      open.push(
        await openLoop({
          ...common,
          headers: { ...common.headers, ...auth },
          url: `${d.proxy}/v1/proxy/${d.agents.transact}`,
          ratePerSecond: OPEN_RATE,
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
      body: SMALL_BODY,
    });
    const { invocation_id: polled } = (await submitted.json()) as { invocation_id: string };
    await drained(db, d.tenant, d.agents.transact);
    for (let r = 0; r < P.rounds; r++) {
      const before = cpuMsOf(d.proxyProc.pid as number);
      const res = await load({
        url: `${d.proxy}/v1/proxy/${d.agents.transact}/invocations/${polled}`,
        headers: auth,
        connections: CONCURRENCY,
        seconds: P.seconds,
      });
      if (res.errors > 0) throw new Error(`poll: ${res.errors} failed requests`);
      pollCpu.push(((cpuMsOf(d.proxyProc.pid as number) - before) * 1000) / res.requests);
      polls.push(res);
    }
    const openP99 = median(open.map((a) => a.p99));
    const p99 = median(accepted.map((a) => a.p99));
    const perSecond = median(e2e);
    rows.push(
      {
        scenario: "transactional",
        metric: `202 throughput c=${CONCURRENCY}`,
        unit: "req/s",
        direct: median(direct202.map((a) => a.rps)),
        bare: null,
        gateway: median(accepted.map((a) => a.rps)),
        target: { text: ">= 3000 req/s", met: median(accepted.map((a) => a.rps)) >= 3000 },
      },
      {
        scenario: "transactional",
        metric: `202 latency p50 c=${CONCURRENCY}`,
        unit: "ms",
        direct: median(direct202.map((a) => a.p50)),
        bare: null,
        gateway: median(accepted.map((a) => a.p50)),
      },
      {
        scenario: "transactional",
        metric: `202 latency p99 c=${CONCURRENCY}`,
        unit: "ms",
        direct: median(direct202.map((a) => a.p99)),
        bare: null,
        gateway: p99,
      },
      {
        scenario: "transactional",
        metric: `202 latency p50 open loop ${OPEN_RATE}/s`,
        unit: "ms",
        direct: median(openDirect.map((a) => a.p50)),
        bare: null,
        gateway: median(open.map((a) => a.p50)),
      },
      {
        scenario: "transactional",
        metric: `202 latency p99 open loop ${OPEN_RATE}/s${openErrors > 0 ? ` (${openErrors} failed submissions)` : ""}`,
        unit: "ms",
        direct: median(openDirect.map((a) => a.p99)),
        bare: null,
        gateway: openP99,
        target: { text: "p99 <= 5 ms", met: openP99 <= 5 },
      },
      {
        scenario: "transactional",
        metric: `completed end to end (c=${CONCURRENCY}, ${Math.round(e2eCount / P.rounds)} per round)`,
        unit: "inv/s",
        direct: median(e2eDirect),
        bare: null,
        gateway: perSecond,
        target: { text: ">= 0.1 x direct", met: perSecond >= 0.1 * median(e2eDirect) },
      },
      {
        scenario: "transactional",
        metric: `poll of a finished call: throughput c=${CONCURRENCY}`,
        unit: "req/s",
        direct: null,
        bare: null,
        gateway: median(polls.map((x) => x.rps)),
      },
      {
        scenario: "transactional",
        metric: `poll of a finished call: proxy CPU per poll c=${CONCURRENCY}`,
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
    );
  }

  // 3. Large bodies each way through the streaming endpoint; the proxy's RSS must stay flat.
  if (want("transfer")) {
    const mib = P.bytes / 2 ** 20;
    console.log(`3/4 ${mib} MiB up and down ...`);
    for (const dir of ["upload", "download"] as const) {
      const runs: Record<Target, Array<{ mibPerS: number; rssGrowthMiB: number | null }>> = {
        direct: [],
        bare: [],
        gateway: [],
      };
      for (let r = 0; r < (quick ? 1 : 2); r++) {
        for (const t of order(r)) {
          const target =
            dir === "upload" ? url(t, "sink", "/sink") : url(t, "source", `/source?bytes=${P.bytes}`);
          const fn = dir === "upload" ? upload : download;
          runs[t].push(await fn(target, auth, P.bytes, pid(t)));
        }
      }
      const growth = Math.max(...runs.gateway.map((x) => x.rssGrowthMiB ?? 0));
      rows.push(
        {
          scenario: `${mib} MiB ${dir}`,
          metric: "throughput",
          unit: "MiB/s",
          direct: median(runs.direct.map((x) => x.mibPerS)),
          bare: median(runs.bare.map((x) => x.mibPerS)),
          gateway: median(runs.gateway.map((x) => x.mibPerS)),
        },
        {
          scenario: `${mib} MiB ${dir}`,
          metric: "peak RSS growth of the proxy",
          unit: "MiB",
          direct: null,
          bare: Math.max(...runs.bare.map((x) => x.rssGrowthMiB ?? 0)),
          gateway: growth,
          target: { text: "< 64 MiB", met: growth < 64 },
        },
      );
    }
  }

  // 4. SSE: upstream flush → client, event by event.
  if (want("sse")) {
    console.log("4/4 SSE event delay ...");
    const delays: Record<Target, number[]> = { direct: [], bare: [], gateway: [] };
    for (let r = 0; r < P.rounds; r++) {
      for (const t of order(r))
        delays[t].push(
          ...(await sseDelays(
            url(t, "sse", `/sse?n=${P.sseEvents}&every=${SSE_EVERY_MS}`),
            auth,
            P.sseStreams,
          )),
        );
    }
    for (const q of [50, 99]) {
      const gw = percentile(delays.gateway, q);
      rows.push({
        scenario: "SSE",
        metric: `event delay p${q} (${P.sseStreams} streams, every ${SSE_EVERY_MS} ms)`,
        unit: "ms",
        direct: percentile(delays.direct, q),
        bare: percentile(delays.bare, q),
        gateway: gw,
        target: q === 99 ? { text: "p99 <= 5 ms", met: gw <= 5 } : undefined,
      });
    }
  }

  // 5. Tool lists (verbatim vs filtered per caller); 6. virtual MCP servers (routed call, merged list).
  if (want("guard")) {
    console.log("answer guard: a 4 KiB tools/call answer, unguarded and redacted ...");
    rows.push(
      ...(await answerGuardRows(d, { rounds: P.rounds, seconds: Math.max(2, Math.round(P.seconds / 2)) })),
    );
  }

  if (want("tools")) {
    console.log("tool list: 200 tools, relayed verbatim and filtered per caller ...");
    rows.push(
      ...(await toolListRows(d, { rounds: P.rounds, seconds: Math.max(2, Math.round(P.seconds / 2)) })),
    );
  }

  if (want("virtual")) {
    console.log("virtual MCP server: routed tools/call, merged tools/list ...");
    rows.push(...(await virtualRows(d, P)));
  }
  if (want("virtual-v1")) {
    console.log("virtual MCP server with an SDK 1.x member: routed tools/call of a 2025-11-25 client ...");
    rows.push(...(await virtualV1Rows(d, P)));
  }

  // 7. The audit chain's cost per control-plane write: the write's transaction with and without
  // its audit event, in process against the same Postgres.
  if (want("audit")) {
    console.log("audit: a control-plane write with its audit event against none ...");
    rows.push(
      ...(await auditRows(stores.databaseUrl, { rounds: Math.max(5, P.rounds), writes: quick ? 200 : 1000 })),
    );
  }

  // 8. Last: it seeds a million rows into the run's tenant (removed with it below).
  if (want("scale")) {
    console.log("scale: the proxy's CPU per call with an empty store, then a seeded one ...");
    rows.push(
      ...(await scaleRows(d, db, {
        rounds: P.rounds,
        seconds: P.seconds,
        concurrency: CONCURRENCY,
        body: SMALL_BODY,
        vacuumed,
      })),
    );
  }

  await stop(d.proxyProc);
  const failed = await db.failures(d.tenant);
  await db.removeTenant(d.tenant);
  await db.close();
  console.log(`\n${table(rows)}\n`);
  // wrk cuts its connections at a step's end: a call whose caller left before its 202 is ended
  // failed/cancelled without running (routes/transact.ts), up to one per connection and step.
  if (failed.length > 0)
    console.log(
      `failed invocations of the run (callers cut at a step's end never run): ${JSON.stringify(failed)}\n`,
    );
  mkdirSync(results, { recursive: true });
  const file =
    jsonAt >= 0
      ? (argv[jsonAt + 1] as string)
      : join(results, `bench-${new Date().toISOString().replace(/[:.]/g, "-")}.json`);
  writeFileSync(
    file,
    `${JSON.stringify(
      {
        at: new Date().toISOString(),
        mode: quick ? "quick" : "full",
        generator: generatorName(),
        cpus: cpus().length,
        node: process.version,
        concurrency: CONCURRENCY,
        params: P,
        rows: withRatios(rows),
        failed,
      },
      null,
      2,
    )}\n`,
  );
  console.log(`results: ${file}`);
  if (profileDir)
    console.log(
      `proxy and worker CPU profiles: ${profileDir} (pnpm exec tsx bench/src/profile.ts ${profileDir})`,
    );
  return 0;
}

const watchdog = setTimeout(
  () => {
    console.error("bench: did not finish in time; stopping");
    void stopAll().finally(() => process.exit(1));
  },
  (quick ? 5 : 30) * 60_000,
);
watchdog.unref();
for (const sig of ["SIGINT", "SIGTERM"] as const) {
  process.once(sig, () => void stopAll().finally(() => process.exit(130)));
}
main()
  .then(async (code) => {
    await stopAll();
    process.exit(code);
  })
  .catch(async (e: unknown) => {
    console.error(`bench failed: ${e instanceof Error ? e.message : String(e)}`);
    await stopAll();
    process.exit(1);
  });
