import { mkdirSync, mkdtempSync, readFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { mintDevToken } from "@gw/auth";
import { type McpUpstream, startMcpUpstream } from "@gw/fixtures";
import postgres from "postgres";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type PrivatePostgres,
  type PrivateRedis,
  type Service,
  spawnService,
  startPostgres,
  startRedis,
} from "./harness.ts";
import { type Inspector, inspectorOf } from "./inspector.ts";
import { type FaultUpstream, startFaultUpstream } from "./upstream.ts";

// The soak (docs/reliability.md, "The soak"): the split deployment under a steady mix of calls for
// GW_SOAK_MINUTES, each process's heap read after a full GC every GW_SOAK_SAMPLE_S through its V8
// inspector; it fails when a process's heap still grows in the second half (least-squares slope
// above GW_SOAK_MAX_SLOPE_MIB per minute), or when a call was answered an error, repeated, or left
// open. Not part of `pnpm test` nor `pnpm test:faults`: `pnpm test:soak`.

const MINUTES = Number(process.env.GW_SOAK_MINUTES ?? 20);
const MAX_SLOPE_MIB = Number(process.env.GW_SOAK_MAX_SLOPE_MIB ?? 0.5);
const SAMPLE_S = Number(process.env.GW_SOAK_SAMPLE_S ?? 30);
/** The mix runs this long before the soak starts (code warming, pools filling): its errors are printed, not failed on. */
const WARMUP_S = Number(process.env.GW_SOAK_WARMUP_S ?? 30);
/** Scales every rate (0.5: half the mix), for a machine that cannot carry the whole of it. */
const LOAD = Number(process.env.GW_SOAK_LOAD ?? 1);
/** When set, a directory for heap snapshots of GW_SOAK_SNAPSHOT_OF (worker) at a third, two thirds and the end. */
const SNAPSHOTS = process.env.GW_SOAK_SNAPSHOTS;
const SNAPSHOT_OF = (process.env.GW_SOAK_SNAPSHOT_OF ?? "worker").split(",");
/** Telemetry exported as in production (to a local sink that takes everything): GW_SOAK_OTEL=0 turns it off. */
const OTEL = process.env.GW_SOAK_OTEL !== "0";

/** Calls per second of each kind (the mix the worker's growth was first seen under). */
const RATES = { stream: 100, transact: 50, mcpTransact: 10, mcpStream: 10 } as const;
type Kind = keyof typeof RATES;

const SECRET = "soak-secret-that-is-at-least-32-characters-long";
const MIB = 1024 * 1024;
let pg: PrivatePostgres;
let redis: PrivateRedis;
let up: FaultUpstream;
let mcpUp: McpUpstream;
let otlp: Server | undefined;
let services: Service[] = [];
let sql: postgres.Sql;

beforeAll(async () => {
  const logDir = mkdtempSync(join(tmpdir(), "gw-soak-logs-"));
  [pg, redis, up, mcpUp] = await Promise.all([
    startPostgres(),
    startRedis(),
    startFaultUpstream(),
    startMcpUpstream(),
  ]);
  const env = {
    DATABASE_URL: pg.url,
    REDIS_URL: redis.url,
    GW_DEV_JWT_SECRET: SECRET,
    GW_ALLOW_HTTP_UPSTREAMS: "true",
    GW_SSRF_ALLOW_CIDRS: "127.0.0.0/8",
    GW_LOG_LEVEL: "warn",
    GW_RATE_LIMIT_RPS: "100000",
    GW_RATE_LIMIT_BURST: "100000",
    GW_AGENT_MAX_CONCURRENCY: "2000",
    GW_TENANT_MAX_CONCURRENCY: "2000",
    GW_QUEUE_NAME: "soak",
    ...(OTEL ? { OTEL_EXPORTER_OTLP_ENDPOINT: await otlpSink(), OTEL_METRIC_EXPORT_INTERVAL: "5000" } : {}),
  };
  // The control plane migrates first; the others find the schema in place.
  const cp = await spawnService("control-plane", env, logDir, { inspect: true });
  const [proxy, worker] = await Promise.all([
    spawnService("proxy", env, logDir, { inspect: true }),
    spawnService("worker", env, logDir, { inspect: true }),
  ]);
  services = [cp, proxy, worker] as Service[];
  sql = postgres(pg.url, { max: 2, onnotice: () => {} });
  console.log(
    `soak: ${MINUTES} min at ${LOAD}x the mix, telemetry ${OTEL ? "on" : "off"}, logs in ${logDir}`,
  );
}, 180_000);

afterAll(async () => {
  await sql?.end({ timeout: 1 }).catch(() => {});
  for (const s of services) await s.kill("SIGKILL").catch(() => {});
  await redis?.stop();
  pg?.destroy();
  await up?.close();
  await mcpUp?.close();
  otlp?.closeAllConnections();
  otlp?.close();
});

/** An OTLP/HTTP endpoint that reads and accepts everything (traces, metrics, logs). */
async function otlpSink(): Promise<string> {
  const server = createServer((req, res) => {
    req.resume();
    req.once("end", () => res.writeHead(200, { "content-type": "application/json" }).end("{}"));
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  otlp = server;
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

type Sample = { min: number; heap: number; external: number; rss: number };

describe("soak (split deployment, steady mix)", () => {
  it(
    "no process's post-GC heap keeps growing; every call answered, terminal and run once",
    async () => {
      const [cp, proxy] = services as [Service, Service];
      const tenant = `soak-${Date.now()}`;
      const token = await mintDevToken(SECRET, { tenant, sub: "ops" });
      const agent = async (body: Record<string, unknown>) => {
        const res = await fetch(`${cp.url}/v1/agents`, {
          method: "POST",
          headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
          body: JSON.stringify({ name: "soak", ...body }),
        });
        expect(res.status).toBe(201);
        return ((await res.json()) as { id: string }).id;
      };
      // A tenant policy: every call is judged on both paths, and tools/list answers are filtered.
      const put = await fetch(`${cp.url}/v1/policy`, {
        method: "PUT",
        headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
        body: JSON.stringify({
          default: "allow",
          rules: [{ action: "deny", match: { tools: ["ask_user"] } }],
        }),
      });
      expect(put.status).toBe(200);
      const plain = await agent({ upstream_url: `${up.url}/ok` });
      // The official SDK's stateful server: answers are event streams, calls carry its session.
      const mcp = await agent({ upstream_url: mcpUp.url, protocol: "mcp", mcp_transport: "streamable_http" });
      const auth = { authorization: `Bearer ${token}` };
      const mcpHeaders: Record<string, string> = {
        ...auth,
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
      };
      const init = await fetch(`${proxy.url}/v1/proxy/${mcp}/stream`, {
        method: "POST",
        headers: mcpHeaders,
        body: JSON.stringify({
          jsonrpc: "2.0",
          id: 0,
          method: "initialize",
          params: {
            protocolVersion: "2025-06-18",
            capabilities: {},
            clientInfo: { name: "soak", version: "1" },
          },
        }),
      });
      await init.arrayBuffer();
      expect(init.status).toBe(200);
      mcpHeaders["mcp-session-id"] = init.headers.get("mcp-session-id") ?? "";
      mcpHeaders["mcp-protocol-version"] = "2025-06-18";
      const initialized = await fetch(`${proxy.url}/v1/proxy/${mcp}/stream`, {
        method: "POST",
        headers: mcpHeaders,
        body: JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" }),
      });
      await initialized.arrayBuffer();
      expect(initialized.status).toBe(202);
      // Nine tool calls, then a tool list.
      const mcpCall = (i: number) =>
        JSON.stringify(
          i % 10 === 9
            ? { jsonrpc: "2.0", id: i, method: "tools/list" }
            : {
                jsonrpc: "2.0",
                id: i,
                method: "tools/call",
                params: { name: "echo", arguments: { text: `soak ${i}` } },
              },
        );
      const calls: Record<Kind, (i: number) => Promise<Response>> = {
        stream: () =>
          fetch(`${proxy.url}/v1/proxy/${plain}/stream`, { method: "POST", headers: auth, body: "x" }),
        transact: () => fetch(`${proxy.url}/v1/proxy/${plain}`, { method: "POST", headers: auth, body: "x" }),
        mcpTransact: (i) =>
          fetch(`${proxy.url}/v1/proxy/${mcp}`, { method: "POST", headers: mcpHeaders, body: mcpCall(i) }),
        mcpStream: (i) =>
          fetch(`${proxy.url}/v1/proxy/${mcp}/stream`, {
            method: "POST",
            headers: mcpHeaders,
            body: mcpCall(i),
          }),
      };
      const expected: Record<Kind, number> = { stream: 200, transact: 202, mcpTransact: 202, mcpStream: 200 };

      const answered = new Set<string>();
      const tally = { sent: 0, ok: 0, errors: 0, skipped: 0 };
      let warming = true;
      const warmup = { sent: 0, errors: 0 };
      const errorsSeen = new Map<string, number>();
      const inFlight: Record<Kind, number> = { stream: 0, transact: 0, mcpTransact: 0, mcpStream: 0 };
      const fire = async (kind: Kind, i: number) => {
        inFlight[kind]++;
        const count = warming ? warmup : tally;
        count.sent++;
        let why: string;
        try {
          const res = await calls[kind](i);
          await res.arrayBuffer();
          const id = res.headers.get("x-gateway-invocation-id");
          if (res.status === expected[kind] && id) {
            if (count === tally) {
              answered.add(id);
              tally.ok++;
            }
            return;
          }
          why = `${kind} ${res.status}`;
        } catch (e) {
          why = `${kind} ${(e as Error).name}`;
        } finally {
          inFlight[kind]--;
        }
        count.errors++;
        if (count === tally) errorsSeen.set(why, (errorsSeen.get(why) ?? 0) + 1);
      };

      // Open loop: every 100 ms each kind is brought up to rate × elapsed. A kind with more than
      // five seconds of its calls still in flight skips (counted): the machine is not keeping up.
      const start = Date.now();
      const endAt = start + WARMUP_S * 1000 + MINUTES * 60_000;
      const issued: Record<Kind, number> = { stream: 0, transact: 0, mcpTransact: 0, mcpStream: 0 };
      const pending = new Set<Promise<void>>();
      const driver = setInterval(() => {
        const elapsed = (Math.min(Date.now(), endAt) - start) / 1000;
        for (const kind of Object.keys(RATES) as Kind[]) {
          const due = Math.floor(RATES[kind] * LOAD * elapsed);
          for (; issued[kind] < due; issued[kind]++) {
            if (inFlight[kind] > RATES[kind] * LOAD * 5) {
              tally.skipped++;
              continue;
            }
            const p = fire(kind, issued[kind]);
            pending.add(p);
            void p.finally(() => pending.delete(p));
          }
        }
      }, 100);

      await sleep(WARMUP_S * 1000);
      warming = false;
      const t0 = Date.now();
      console.log(`warm-up: ${warmup.sent} calls, ${warmup.errors} errors`);
      const samples = new Map<string, Sample[]>(services.map((s) => [s.name, []]));
      const inspectors = new Map<string, Inspector>(
        services.map((s) => [s.name, inspectorOf(s.inspectPort as number)]),
      );
      const sample = async () => {
        const min = (Date.now() - t0) / 60_000;
        const row: string[] = [];
        for (const s of services) {
          const { heap, external } = (await inspectors.get(s.name)?.afterGc()) ?? { heap: 0, external: 0 };
          const rss = rssOf(s.child.pid);
          samples.get(s.name)?.push({ min, heap, external, rss });
          row.push(`${s.name} ${mib(heap)}/${mib(external)}/${mib(rss)}`);
        }
        console.log(
          `${min.toFixed(1)} min: heap/external/rss MiB ${row.join(", ")}; ${tally.ok} ok, ${tally.errors} errors, ${tally.skipped} skipped`,
        );
      };
      // Snapshots at a third and two thirds of the run (one set when both are due: a snapshot of a
      // busy process can take a minute), and at its end.
      const snapshotsAt = SNAPSHOTS ? [1 / 3, 2 / 3].map((f) => t0 + f * MINUTES * 60_000) : [];
      if (SNAPSHOTS) mkdirSync(SNAPSHOTS, { recursive: true });
      const snapshot = async () => {
        for (const s of services.filter((x) => SNAPSHOT_OF.includes(x.name))) {
          const file = join(
            SNAPSHOTS as string,
            `${s.name}-${Math.round((Date.now() - t0) / 60_000)}min.heapsnapshot`,
          );
          await inspectors.get(s.name)?.snapshot(file);
          console.log(`snapshot ${file}`);
        }
      };
      try {
        while (Date.now() < endAt) {
          await sample();
          const due = snapshotsAt.filter((at) => Date.now() >= at - SAMPLE_S * 500);
          if (due.length > 0) {
            snapshotsAt.splice(0, due.length);
            await snapshot();
          }
          await sleep(Math.max(0, Math.min(SAMPLE_S * 1000, endAt - Date.now())));
        }
        await sample();
        if (SNAPSHOTS) await snapshot();
      } finally {
        clearInterval(driver);
        for (const i of inspectors.values()) i.close();
      }
      await Promise.all(pending);

      // Every answered call ends with one terminal record; nothing is repeated upstream.
      const settledBy = Date.now() + 120_000;
      let open = -1;
      for (; Date.now() < settledBy; await sleep(500)) {
        [{ open }] = (await sql`
          select count(*)::int as open from invocations where tenant_id = ${tenant} and completed_at is null`) as [
          { open: number },
        ];
        if (open === 0) break;
      }
      let recorded = 0;
      const ids = [...answered];
      for (let i = 0; i < ids.length; i += 10_000) {
        const [row] = (await sql`
          select count(*)::int as n from invocations
          where tenant_id = ${tenant} and id = any(${ids.slice(i, i + 10_000)}) and completed_at is not null`) as [
          { n: number },
        ];
        recorded += row.n;
      }
      const repeated = [...answered].filter((id) => (up.hits.get(id) ?? 0) > 1).length;

      const report = services.map((s) => {
        const all = samples.get(s.name) ?? [];
        const half = all.filter((x) => x.min >= MINUTES / 2);
        return {
          process: s.name,
          heapStart: mib(all[0]?.heap),
          heapEnd: mib(all.at(-1)?.heap),
          rssStart: mib(all[0]?.rss),
          rssEnd: mib(all.at(-1)?.rss),
          heapSlope: round(slope(all, "heap") / MIB),
          heapSlopeSecondHalf: round(slope(half, "heap") / MIB),
          externalSlopeSecondHalf: round(slope(half, "external") / MIB),
          rssSlopeSecondHalf: round(slope(half, "rss") / MIB),
        };
      });
      console.log(
        `\nSoak: ${MINUTES} min, rates per second ${Object.entries(RATES)
          .map(([k, r]) => `${k} ${r * LOAD}`)
          .join(", ")}; ${tally.sent} sent, ${tally.ok} ok, ${tally.errors} errors ${JSON.stringify(
          Object.fromEntries(errorsSeen),
        )}, ${tally.skipped} skipped; ${recorded} answered calls terminal, ${open} open, ${repeated} repeated. Slopes in MiB/min (bound ${MAX_SLOPE_MIB}):`,
      );
      console.table(report);

      expect({ errors: tally.errors, open, repeated, recorded }).toEqual({
        errors: 0,
        open: 0,
        repeated: 0,
        recorded: answered.size,
      });
      for (const r of report)
        expect({ process: r.process, growing: r.heapSlopeSecondHalf > MAX_SLOPE_MIB }).toEqual({
          process: r.process,
          growing: false,
        });
    },
    (MINUTES + 10) * 60_000,
  );
});

/** Least-squares slope of `key` over minutes (bytes per minute); 0 with fewer than 2 samples. */
function slope(samples: Sample[], key: "heap" | "external" | "rss"): number {
  const n = samples.length;
  if (n < 2) return 0;
  const mx = samples.reduce((a, s) => a + s.min, 0) / n;
  const my = samples.reduce((a, s) => a + s[key], 0) / n;
  let num = 0;
  let den = 0;
  for (const s of samples) {
    num += (s.min - mx) * (s[key] - my);
    den += (s.min - mx) ** 2;
  }
  return den === 0 ? 0 : num / den;
}

/** Resident set size of a process (Linux /proc), 0 where it cannot be read. */
function rssOf(pid: number | undefined): number {
  try {
    const kb = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1];
    return Number(kb ?? 0) * 1024;
  } catch {
    return 0;
  }
}

const round = (x: number) => Math.round(x * 100) / 100;
const mib = (b: number | undefined) => round((b ?? 0) / MIB);
