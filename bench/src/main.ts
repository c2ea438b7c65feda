// `pnpm bench [--quick] [--no-build] [--profile] [--pin [spec]] [--timeline] [--json <file>] [--only steps,stream,oauth,connections,policy,quota,a2a,transact,tail,transfer,sse,tools,guard,virtual,virtual-v1,search,x402-mcp,audit,scale]`: the split deployment against a
// direct upstream and a bare Node proxy, side by side in one run. See docs/performance.md.
import { spawnSync } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { cpus, loadavg } from "node:os";
import { join } from "node:path";
import { a2aRows } from "./a2a.ts";
import { auditRows } from "./audit.ts";
import { perUserCpu } from "./connections.ts";
import { build, type Deployment, deploy, storesOrExplain } from "./deploy.ts";
import { answerGuardRows } from "./guard.ts";
import { generatorName } from "./load.ts";
import { oauthCpu } from "./oauth.ts";
import {
  claimServices,
  describePin,
  hasTaskset,
  type PinSpec,
  pin,
  pinService,
  pinSpecOf,
  restoreHint,
  restoreServices,
} from "./pin.ts";
import { policyRows } from "./policy.ts";
import { nodeChildrenOf, ROOT, stop, stopAll } from "./procs.ts";
import { quotaRows } from "./quota.ts";
import type { Row } from "./report.ts";
import { table, withRatios } from "./report.ts";
import { scaleRows } from "./scale.ts";
import { searchRows } from "./search.ts";
import { sseRows } from "./sse.ts";
import { benchStore } from "./store.ts";
import { streamRows, type Target } from "./stream-rows.ts";
import { type Layout, tailRows } from "./tail.ts";
import { toolListRows } from "./tools.ts";
import { transactRows } from "./transact-rows.ts";
import { transferRows } from "./transfer.ts";
import { virtualRows } from "./virtual.ts";
import { virtualV1Rows } from "./virtual-v1.ts";
import { x402McpRows } from "./x402-mcp.ts";

const argv = process.argv.slice(2);
const quick = argv.includes("--quick");
const jsonAt = argv.indexOf("--json");
const P = quick
  ? { rounds: 1, seconds: 2, latSeconds: 1, bytes: 256 * 2 ** 20, sseEvents: 100, sseStreams: 4 }
  : { rounds: 3, seconds: 5, latSeconds: 3, bytes: 2 ** 30, sseEvents: 400, sseStreams: 4 };
const onlyAt = argv.indexOf("--only");
/** `--only steps,stream,oauth,connections,policy,quota,a2a,transact,tail,transfer,sse,tools,guard,virtual,virtual-v1,search,x402-mcp,audit,scale`: run just those sections (for iterating on one figure). */
const only = onlyAt >= 0 ? new Set((argv[onlyAt + 1] ?? "").split(",")) : null;
const want = (section: string) => only === null || only.has(section);
const CONCURRENCY = 64;
/** Offered arrival rate of the transactional open-loop step (target: 202 p99 <= 5 ms at 500/s). */
const OPEN_RATE = 500;
const SMALL_BODY = JSON.stringify({ prompt: "hello", n: 1 });
const SSE_EVERY_MS = 5;
const results = join(ROOT, "bench", "results");
const profileDir = argv.includes("--profile") ? join(results, `prof-${Date.now()}`) : undefined;
/** `--pin [spec]` / GW_BENCH_PIN: the roles on chosen cores (pin.ts); null: unpinned. */
let pinning: PinSpec | null = pinSpecOf(argv, process.env.GW_BENCH_PIN);
/** `--timeline` (or `--only tail`): the 202's timeline per phase (tail.ts), the proxy timing each 202. */
const tail = only?.has("tail") || argv.includes("--timeline");
const timelineFile = tail ? join(results, `timeline-${Date.now()}.jsonl`) : undefined;

async function main(): Promise<number> {
  // `--only steps`: the per-step table (steps.ts), on a deployment of its own (its proxy is profiled).
  if (only?.has("steps")) {
    const args = argv.filter((a, i) => a !== "--only" && i !== onlyAt + 1);
    const steps = spawnSync(
      process.execPath,
      ["--import", "tsx", join(ROOT, "bench/src/steps.ts"), ...args],
      {
        stdio: "inherit",
      },
    );
    if (steps.status !== 0 || only.size === 1) return steps.status ?? 1;
  }
  const stores = await storesOrExplain();
  if (!stores) return 1;
  if (!argv.includes("--no-build")) {
    console.log("building the services (pnpm build) ...");
    build();
  }
  console.log(`load generator: ${generatorName()}; ${cpus().length} CPUs; ${quick ? "quick" : "full"} run`);
  if (pinning && !hasTaskset()) {
    console.log("--pin: taskset (util-linux) is not installed here: running unpinned");
    pinning = null;
  }
  // The load generator is this process: what it starts from here on (wrk, the upstream, the bare
  // proxy, the control plane) inherits its core; the proxy and the worker are moved after.
  mkdirSync(results, { recursive: true });
  if (pinning) claimServices(join(results, "pinned-services.json"));
  if (pinning?.load) pin(process.pid, pinning.load);
  const d = await deploy({
    ...stores,
    profileDir,
    proxyEnv: timelineFile ? { GW_PROXY_TIMELINE: timelineFile } : undefined,
    paths: {
      echo: "/echo",
      sink: "/sink",
      source: `/source?bytes=${P.bytes}`,
      sse: `/sse?n=${P.sseEvents}&every=${SSE_EVERY_MS}`,
      transact: "/echo",
    },
  });
  if (pinning) pinRoles(pinning, d);
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
    rows.push(
      ...(await streamRows({
        spec,
        pid,
        concurrency: CONCURRENCY,
        seconds: P.seconds,
        latSeconds: P.latSeconds,
        rounds: P.rounds,
        vacuumed,
      })),
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

  // 1b'. The same small calls through a per-user credential (the caller's own grant) against a
  // static bearer one.
  if (want("connections")) {
    console.log("1b'/4 per-user credential against a static bearer, streaming endpoint ...");
    rows.push(
      await perUserCpu(d, {
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
    rows.push(
      ...(await policyRows(d, {
        path: "/echo",
        body: SMALL_BODY,
        concurrency: CONCURRENCY,
        seconds: P.seconds,
        rounds: P.rounds,
      })),
    );
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
    rows.push(
      ...(await transactRows(d, db, {
        body: SMALL_BODY,
        concurrency: CONCURRENCY,
        seconds: P.seconds,
        rounds: P.rounds,
        openRate: OPEN_RATE,
        vacuumed,
      })),
    );
  }

  // 2b. Where the 202's tail goes: the open loop with the proxy timing each 202, the worker on its
  // own core and on the proxy's (pinned), interleaved.
  if (tail && timelineFile) {
    console.log("2b/4 the 202's timeline at the open loop's rate ...");
    const workerPid = d.workerProc.pid as number;
    const w = pinning?.worker;
    const p = pinning?.proxy;
    const layouts: Layout[] =
      w !== undefined && p !== undefined && w !== p
        ? [
            { name: `worker off the proxy's core (on ${w})`, apply: () => pin(workerPid, w) },
            { name: `worker on the proxy's core (${p})`, apply: () => pin(workerPid, p) },
          ]
        : [{ name: pinning ? `pinned (${describePin(pinning)})` : "unpinned", apply: () => {} }];
    rows.push(
      ...(await tailRows(d, db, {
        file: timelineFile,
        body: SMALL_BODY,
        rate: OPEN_RATE,
        seconds: P.seconds,
        rounds: P.rounds,
        layouts,
        vacuumed,
      })),
    );
    layouts[0]?.apply();
    console.log(`the proxy's timeline: ${timelineFile}`);
  }

  // 3. Large bodies each way through the streaming endpoint; the proxy's RSS must stay flat.
  if (want("transfer")) {
    console.log(`3/4 ${P.bytes / 2 ** 20} MiB up and down ...`);
    rows.push(...(await transferRows({ url, auth, pid, bytes: P.bytes, rounds: quick ? 1 : 2 })));
  }

  // 4. SSE: upstream flush → client, event by event.
  if (want("sse")) {
    console.log("4/4 SSE event delay ...");
    rows.push(
      ...(await sseRows({
        url: (t, path) => url(t, "sse", path),
        auth,
        events: P.sseEvents,
        everyMs: SSE_EVERY_MS,
        streams: P.sseStreams,
        rounds: P.rounds,
      })),
    );
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

  if (want("search")) {
    console.log(
      "tool search: index build and search at 1,000 tools, search_tools, call_tool against tools/call ...",
    );
    rows.push(...(await searchRows(d, P)));
  }
  if (want("x402-mcp")) {
    console.log("x402 inside MCP tool calls: a paid tools/call (verification only) against the free one ...");
    const windowsFile = profileDir ? join(profileDir, "x402-mcp-rounds.json") : undefined;
    rows.push(...(await x402McpRows(d, { rounds: P.rounds, quick, windowsFile })));
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
  await db.removeBenchTenants();
  await db.close();
  console.log(
    `\npinning: ${pinning ? describePin(pinning) : "none (unpinned)"}; load average ${loadavg()
      .map((x) => x.toFixed(2))
      .join(", ")}\n${table(rows)}\n`,
  );
  // wrk cuts its connections at a step's end: a call whose caller left before its 202 is ended
  // failed/cancelled without running (routes/transact.ts), up to one per connection and step.
  if (failed.length > 0)
    console.log(
      `failed invocations of the run (callers cut at a step's end never run): ${JSON.stringify(failed)}\n`,
    );
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
        pinning,
        loadavg: loadavg(),
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

/** The proxy (and its processes), the worker, the upstream and the system services on their cores. */
function pinRoles(spec: PinSpec, d: Deployment): void {
  const proxy = d.proxyProc.pid as number;
  if (spec.proxy) for (const p of [proxy, ...nodeChildrenOf(proxy)]) pin(p, spec.proxy);
  if (spec.worker) pin(d.workerProc.pid as number, spec.worker);
  if (spec.upstream) pin(d.upstreamProc.pid as number, spec.upstream);
  const pg = spec.postgres ? pinService("postgres", spec.postgres) : 0;
  const redis = spec.redis ? pinService("redis", spec.redis) : 0;
  console.log(
    `pinning: ${describePin(spec)} (Postgres ${pg} processes${spec.redis ? `, Redis ${redis}` : ""}; the upstream, bare proxy and control plane on the load's core${spec.upstream ? " but the upstream" : ""})`,
  );
  if (pg + redis > 0)
    console.log(
      `  the services get their affinity back when the bench ends; if it is killed: ${restoreHint()}`,
    );
}

// Postgres and Redis are shared: their own affinity back on every way out (exit runs for all of them).
process.on("exit", restoreServices);
const watchdog = setTimeout(
  () => {
    console.error("bench: did not finish in time; stopping");
    void stopAll().finally(() => process.exit(1));
  },
  (quick ? 5 : 30) * 60_000,
);
watchdog.unref();
for (const sig of ["SIGINT", "SIGTERM", "SIGHUP"] as const) {
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
