import { mkdtempSync } from "node:fs";
import { request } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { mintDevToken } from "@gw/auth";
import postgres from "postgres";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type FaultRow,
  type PrivatePostgres,
  type PrivateRedis,
  printTable,
  type Service,
  spawnService,
  startPostgres,
  startRedis,
} from "./harness.ts";
import { type FaultUpstream, startFaultUpstream } from "./upstream.ts";

const SECRET = "faults-secret-that-is-at-least-32-characters-long";
const rows: FaultRow[] = [];
let pg: PrivatePostgres;
let redis: PrivateRedis;
let up: FaultUpstream;
let cp: Service;
let proxy: Service;
let worker: Service;
let sql: postgres.Sql;
let logDir: string;

beforeAll(async () => {
  logDir = mkdtempSync(join(tmpdir(), "gw-faults-logs-"));
  [pg, redis, up] = await Promise.all([startPostgres(), startRedis(), startFaultUpstream()]);
  const env = {
    DATABASE_URL: pg.url,
    REDIS_URL: redis.url,
    GW_DEV_JWT_SECRET: SECRET,
    GW_ALLOW_HTTP_UPSTREAMS: "true",
    GW_SSRF_ALLOW_CIDRS: "127.0.0.0/8",
    GW_LOG_LEVEL: "warn",
    GW_JOB_LOCK_MS: "2000",
    GW_RECONCILE_MS: "1000",
    GW_TRANSACT_TIMEOUT_MS: "15000",
    GW_RETRY_BASE_MS: "50",
    GW_RATE_LIMIT_RPS: "100000",
    GW_RATE_LIMIT_BURST: "100000",
    GW_AGENT_MAX_CONCURRENCY: "2000",
    GW_TENANT_MAX_CONCURRENCY: "2000",
    GW_SHUTDOWN_TIMEOUT_MS: "12000",
    GW_QUEUE_NAME: "faults",
  };
  // The control plane migrates first; the others find the schema in place.
  cp = await spawnService("control-plane", env, logDir);
  [proxy, worker] = await Promise.all([
    spawnService("proxy", env, logDir),
    spawnService("worker", env, logDir),
  ]);
  sql = postgres(pg.url, { max: 4, onnotice: () => {} });
  console.log(`fault suite: logs in ${logDir}`);
}, 180_000);

afterAll(async () => {
  console.log(`\nFault table\n\n${printTable(rows)}\n`);
  await sql?.end({ timeout: 1 }).catch(() => {});
  for (const s of [proxy, worker, cp]) await s?.kill("SIGKILL").catch(() => {});
  await redis?.stop();
  pg?.destroy();
  await up?.close();
});

type Tenant = { id: string; token: string };
let tenants = 0;
async function tenant(): Promise<Tenant> {
  const id = `fault-${++tenants}-${Date.now()}`;
  return { id, token: await mintDevToken(SECRET, { tenant: id, sub: "ops" }) };
}

async function agent(t: Tenant, body: Record<string, unknown>): Promise<string> {
  const res = await fetch(`${cp.url}/v1/agents`, {
    method: "POST",
    headers: { authorization: `Bearer ${t.token}`, "content-type": "application/json" },
    body: JSON.stringify({ name: "fault", ...body }),
  });
  if (res.status !== 201) throw new Error(`agent: ${res.status} ${await res.text()}`);
  return ((await res.json()) as { id: string }).id;
}

/** A transactional call: the invocation id when accepted (202), else the error status. */
async function transact(
  t: Tenant,
  agentId: string,
  body = "x",
): Promise<{ id?: string; status: number; ms: number; err?: string }> {
  const t0 = performance.now();
  try {
    const res = await fetch(`${proxy.url}/v1/proxy/${agentId}`, {
      method: "POST",
      headers: { authorization: `Bearer ${t.token}`, "content-type": "application/json" },
      body,
      signal: AbortSignal.timeout(10_000),
    });
    const text = await res.text();
    const ms = performance.now() - t0;
    if (res.status !== 202) return { status: res.status, ms };
    return { id: (JSON.parse(text) as { invocation_id: string }).invocation_id, status: 202, ms };
  } catch (e) {
    const cause = (e as { cause?: { code?: string; message?: string } }).cause;
    const err = `${(e as Error).name}${cause ? `: ${cause.code ?? cause.message}` : ""}`;
    return { status: 0, ms: performance.now() - t0, err };
  }
}

/** A streaming call read to its end: its invocation id (header), status and whether it ended whole. */
async function stream(
  t: Tenant,
  agentId: string,
  opts: { abortAfterFirstChunk?: boolean } = {},
): Promise<{ id?: string; status: number; whole: boolean; bytes: number }> {
  const ac = new AbortController();
  try {
    const res = await fetch(`${proxy.url}/v1/proxy/${agentId}/stream`, {
      method: "POST",
      headers: { authorization: `Bearer ${t.token}` },
      body: "x",
      signal: ac.signal,
    });
    const id = res.headers.get("x-gateway-invocation-id") ?? undefined;
    let bytes = 0;
    try {
      for await (const chunk of res.body ?? []) {
        bytes += (chunk as Uint8Array).length;
        if (opts.abortAfterFirstChunk) {
          ac.abort();
          break;
        }
      }
    } catch {
      return { ...(id ? { id } : {}), status: res.status, whole: false, bytes };
    }
    return { ...(id ? { id } : {}), status: res.status, whole: !opts.abortAfterFirstChunk, bytes };
  } catch {
    return { status: 0, whole: false, bytes: 0 };
  }
}

type Rec = { status: string; error_class: string | null; resp_size: number | null };
async function records(ids: string[]): Promise<Map<string, Rec>> {
  const got = await sql<Array<Rec & { id: string }>>`
    select id, status, error_class, resp_size::int as resp_size from invocations where id = any(${ids})`;
  return new Map(got.map((r) => [r.id, r]));
}

/**
 * Waits until every accepted call has a terminal record (at most `boundMs`), then scores it:
 * lost (no record), stuck (still open), repeated (upstream reached more than once), and the time
 * from `faultEnd` until everything was terminal.
 */
async function settle(accepted: string[], faultEnd: number, boundMs = 60_000) {
  const until = Date.now() + boundMs;
  let recs = new Map<string, Rec>();
  for (;;) {
    recs = await records(accepted).catch(() => recs);
    const open = accepted.filter((id) => {
      const r = recs.get(id);
      return !r || r.status === "pending" || r.status === "running";
    });
    if (open.length === 0 || Date.now() > until) break;
    await sleep(250);
  }
  const recoverMs = Math.max(0, Date.now() - faultEnd);
  const lost = accepted.filter((id) => !recs.has(id)).length;
  const stuck = accepted.filter((id) => {
    const s = recs.get(id)?.status;
    return s === "pending" || s === "running";
  }).length;
  const repeated = accepted.filter((id) => (up.hits.get(id) ?? 0) > 1).length;
  return { recs, lost, stuck, repeated, recoverMs };
}

/**
 * Upstream calls on `path` carrying an invocation id the caller never got (it was answered an
 * error). For transactional calls this is docs/reliability.md's "a call the caller was answered an error for is
 * never executed later" and must be 0. A streaming call is forwarded live, never later: one that
 * reached the upstream while its caller saw no answer is counted and printed, not asserted.
 */
function ranAfterError(acceptedOrStarted: Set<string>, before: Set<string>, path: string): number {
  let n = 0;
  for (const [id, p] of up.paths) if (p === path && !before.has(id) && !acceptedOrStarted.has(id)) n++;
  return n;
}

/** What the callers without an answer saw, e.g. ` (TimeoutError after 10003 ms)`; empty if none. */
function whys(calls: Array<{ err?: string; ms: number }>): string {
  const seen = [...new Set(calls.flatMap((r) => (r.err ? [`${r.err} after ${Math.round(r.ms)} ms`] : [])))];
  return seen.length > 0 ? ` (${seen.join(", ")})` : "";
}

/** Runs `n` tasks with at most `width` at a time. */
async function pool<T>(n: number, width: number, task: (i: number) => Promise<T>): Promise<T[]> {
  const out: T[] = new Array(n);
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(width, n) }, async () => {
      for (let i = next++; i < n; i = next++) out[i] = await task(i);
    }),
  );
  return out;
}

/** Prints the row and asserts 0 lost, 0 stuck, 0 repeated and 0 run after an error. */
function record(row: FaultRow) {
  rows.push(row);
  console.log(printTable([row]).split("\n").at(-1));
  expect({
    lost: row.lost,
    stuck: row.stuck,
    repeated: row.repeated,
    ranAfterError: row.ranAfterError,
  }).toEqual({
    lost: 0,
    stuck: 0,
    repeated: 0,
    ranAfterError: 0,
  });
}

describe("fault suite (split deployment, private Postgres and Redis)", () => {
  it("worker SIGKILL mid-call (http and MCP tools/call): ended failed, never repeated", async () => {
    const t = await tenant();
    const http = await agent(t, { upstream_url: `${up.url}/hold` });
    const mcp = await agent(t, { upstream_url: `${up.url}/mcp`, protocol: "mcp" });
    up.holding = true;
    const call = (i: number) =>
      i % 2 === 0
        ? transact(t, http)
        : transact(
            t,
            mcp,
            JSON.stringify({ jsonrpc: "2.0", id: i, method: "tools/call", params: { name: "act" } }),
          );
    const inFlight = await pool(40, 10, call);
    const ids = inFlight.flatMap((r) => (r.id ? [r.id] : []));
    // Every call reached the upstream once and is held there.
    for (let i = 0; i < 200 && up.held.size < ids.length; i++) await sleep(50);
    expect(up.held.size).toBe(ids.length);
    await worker.kill("SIGKILL");
    up.holding = false;
    // Calls accepted while no worker runs.
    const queued = (await pool(20, 10, call)).flatMap((r) => (r.id ? [r.id] : []));
    await worker.restart();
    const end = Date.now();
    const s = await settle([...ids, ...queued], end);
    const killed = ids.map((id) => s.recs.get(id));
    expect(killed.every((r) => r?.status === "failed" && r.error_class === "internal")).toBe(true);
    expect(queued.every((id) => s.recs.get(id)?.status === "succeeded")).toBe(true);
    record({
      fault: "worker SIGKILL mid-call (http + MCP tools/call)",
      calls: ids.length + queued.length,
      lost: s.lost,
      stuck: s.stuck,
      repeated: s.repeated,
      ranAfterError: 0,
      errors: inFlight.length + 20 - ids.length - queued.length,
      recoverMs: s.recoverMs,
      note: `${ids.length} in flight ended failed/internal, ${queued.length} queued meanwhile succeeded`,
    });
  });

  it("proxy SIGKILL right after its 202s: every accepted call is pending, then runs once", async () => {
    const t = await tenant();
    const a = await agent(t, { upstream_url: `${up.url}/ok` });
    // No worker: nothing may run before the proxy dies, so what the 202 promised is all in Postgres.
    await worker.kill("SIGKILL");
    const results = await pool(50, 10, () => transact(t, a));
    await proxy.kill("SIGKILL"); // at once: enqueues still under way are lost with the process
    const ids = results.flatMap((r) => (r.id ? [r.id] : []));
    expect(ids.length).toBe(50);
    const before = await records(ids);
    expect([...before.values()].filter((r) => r.status === "pending").length).toBe(ids.length);
    await Promise.all([proxy.restart(), worker.restart()]);
    const end = Date.now();
    const s = await settle(ids, end);
    expect(ids.every((id) => s.recs.get(id)?.status === "succeeded")).toBe(true);
    expect(ids.filter((id) => up.hits.get(id) === 1).length).toBe(ids.length);
    record({
      fault: "proxy SIGKILL right after its 202s (no worker running)",
      calls: results.length,
      lost: s.lost,
      stuck: s.stuck,
      repeated: s.repeated,
      ranAfterError: 0,
      errors: results.length - ids.length,
      recoverMs: s.recoverMs,
      note: `${ids.length} accepted: all pending in Postgres after the kill, each run once after restart`,
    });
  });

  it("Redis stopped (and flushed) under transactional load: every 202 runs once", async () => {
    const t = await tenant();
    const a = await agent(t, { upstream_url: `${up.url}/ok?ms=20` });
    let faultEnd = 0;
    const fault = (async () => {
      await sleep(1_000);
      await redis.stop(); // no persistence: everything queued is gone
      await sleep(3_000);
      await redis.start();
      faultEnd = Date.now();
    })();
    const results = await pool(300, 8, async (i) => {
      if (i % 8 === 0) await sleep(100);
      return transact(t, a);
    });
    await fault;
    const ids = results.flatMap((r) => (r.id ? [r.id] : []));
    const s = await settle(ids, faultEnd);
    expect(ids.every((id) => s.recs.get(id)?.status === "succeeded")).toBe(true);
    const once = ids.filter((id) => up.hits.get(id) === 1).length;
    expect(once).toBe(ids.length);
    record({
      fault: "Redis stopped 3 s and flushed, transactional load",
      calls: results.length,
      lost: s.lost,
      stuck: s.stuck,
      repeated: s.repeated,
      ranAfterError: 0,
      errors: results.length - ids.length,
      recoverMs: s.recoverMs,
      note: `${ids.length} accepted (202), slowest answer ${Math.round(Math.max(...results.map((r) => r.ms)))} ms`,
    });
  });

  it("Postgres restarted under mixed load: 503 while down, nothing lost, stuck or run after an error", async () => {
    const t = await tenant();
    const tx = await agent(t, { upstream_url: `${up.url}/ok?ms=20` });
    const st = await agent(t, { upstream_url: `${up.url}/long?ms=300` });
    const before = new Set(up.hits.keys());
    let faultEnd = 0;
    let stop = false;
    const fault = (async () => {
      await sleep(1_500);
      pg.stop("fast");
      await sleep(3_000);
      pg.start();
      faultEnd = Date.now();
      await sleep(2_000);
      stop = true;
    })();
    const txs: Array<Awaited<ReturnType<typeof transact>>> = [];
    const sts: Array<Awaited<ReturnType<typeof stream>>> = [];
    await Promise.all(
      Array.from({ length: 8 }, async (_, w) => {
        while (!stop) {
          if (w % 2 === 0) txs.push(await transact(t, tx));
          else sts.push(await stream(t, st));
        }
      }),
    );
    await fault;
    const accepted = [
      ...txs.flatMap((r) => (r.id ? [r.id] : [])),
      ...sts.flatMap((r) => (r.id ? [r.id] : [])),
    ];
    const s = await settle(accepted, faultEnd);
    const errors = txs.filter((r) => !r.id).length + sts.filter((r) => r.status !== 200).length;
    const unavailable = txs.filter((r) => r.status === 503);
    record({
      fault: "Postgres down 3 s (fast stop, restart), mixed load",
      calls: txs.length + sts.length,
      lost: s.lost,
      stuck: s.stuck,
      repeated: s.repeated,
      ranAfterError: ranAfterError(new Set(accepted), before, "/ok"),
      errors,
      recoverMs: s.recoverMs,
      note: `${unavailable.length} transactional 503 (slowest ${Math.round(Math.max(0, ...unavailable.map((r) => r.ms)))} ms); ${txs.filter((r) => r.status === 0).length} transactional without an answer${whys(txs)}; ${ranAfterError(new Set(accepted), before, "/long")} streams forwarded whose caller got no answer`,
    });
  });

  it("Postgres stopped under load (policy on, small in-flight limit): every 5xx is a 503 store unavailable", async () => {
    const t = await tenant();
    // A policy document: every admission reads it (the path whose wrapped driver error was a 500).
    const put = await fetch(`${cp.url}/v1/policy`, {
      method: "PUT",
      headers: { authorization: `Bearer ${t.token}`, "content-type": "application/json" },
      body: JSON.stringify({ default: "allow", on_error: "deny", rules: [] }),
    });
    expect(put.status).toBe(200);
    // A small in-flight limit: admissions waiting on the store used to fill it (429, not 503).
    const tx = await agent(t, { upstream_url: `${up.url}/ok?ms=5`, max_concurrency: 4 });
    const st = await agent(t, { upstream_url: `${up.url}/long?ms=100`, max_concurrency: 4 });
    const before = new Set(up.hits.keys());
    let down = { from: 0, to: 0 };
    let faultEnd = 0;
    let stop = false;
    const fault = (async () => {
      await sleep(1_000);
      pg.stop("fast");
      down = { from: Date.now(), to: Number.POSITIVE_INFINITY };
      await sleep(4_000);
      down.to = Date.now();
      pg.start();
      faultEnd = Date.now();
      await sleep(2_000);
      stop = true;
    })();
    type Seen = { status: number; id?: string; at: number; ms: number; body: string };
    const seen: Seen[] = [];
    const once = async (path: string): Promise<Seen> => {
      const t0 = performance.now();
      const at = Date.now();
      try {
        const res = await fetch(`${proxy.url}${path}`, {
          method: "POST",
          headers: { authorization: `Bearer ${t.token}` },
          body: "x",
          signal: AbortSignal.timeout(10_000),
        });
        const body = await res.text();
        const id = res.headers.get("x-gateway-invocation-id") ?? undefined;
        return { status: res.status, ...(id ? { id } : {}), at, ms: performance.now() - t0, body };
      } catch {
        return { status: 0, at, ms: performance.now() - t0, body: "" };
      }
    };
    await Promise.all(
      Array.from({ length: 16 }, async (_, w) => {
        while (!stop) seen.push(await once(w % 2 === 0 ? `/v1/proxy/${tx}` : `/v1/proxy/${st}/stream`));
      }),
    );
    await fault;
    const accepted = seen.flatMap((r) => (r.id && (r.status === 202 || r.status === 200) ? [r.id] : []));
    const s = await settle(accepted, faultEnd);
    const other5xx = seen.filter((r) => r.status >= 500 && r.status !== 503);
    const unavailable = seen.filter((r) => r.status === 503);
    const wrong503 = unavailable.filter((r) => r.body !== '{"error":"store unavailable"}');
    // Calls sent while Postgres was stopped: pg_ctl stop and start (-w) run synchronously in this
    // process, and [from, to] lies between the stop's return and the start's call, so a call that
    // started within it was sent while Postgres was down. Its caller must learn that the store is
    // down (503), never that it is over its limit (429): admissions waiting on the store are what
    // fill the slots while it is down.
    const busyWhileDown = seen.filter((r) => r.status === 429 && r.at >= down.from && r.at <= down.to);
    record({
      fault: "Postgres stopped 4 s under load (policy on, max_concurrency 4, 16 callers)",
      calls: seen.length,
      lost: s.lost,
      stuck: s.stuck,
      repeated: s.repeated,
      ranAfterError: ranAfterError(new Set(accepted), before, "/ok"),
      errors: seen.filter((r) => r.status >= 500 || r.status === 0).length,
      recoverMs: s.recoverMs,
      note: `${other5xx.length} 5xx other than 503; ${unavailable.length} 503 (slowest ${Math.round(Math.max(0, ...unavailable.map((r) => r.ms)))} ms); ${busyWhileDown.length} 429 while down; ${seen.filter((r) => r.status === 0).length} without an answer`,
    });
    // `record` asserted that no accepted call was lost or left open (and none repeated or run after
    // its caller was answered an error).
    expect(other5xx.map((r) => r.status)).toEqual([]);
    expect(wrong503).toEqual([]);
    expect(seen.filter((r) => r.status === 0)).toEqual([]);
    expect(busyWhileDown.map((r) => `429 at +${r.at - down.from} ms: ${r.body}`)).toEqual([]);
    // The outage was met: calls were sent while it lasted and callers were told so.
    expect(seen.filter((r) => r.at >= down.from && r.at <= down.to).length).toBeGreaterThan(0);
    expect(unavailable.length).toBeGreaterThan(0);
  });

  it("upstream resets mid-body: recorded failed, never retried after the answer began", async () => {
    const t = await tenant();
    const a = await agent(t, { upstream_url: `${up.url}/reset` });
    const start = Date.now();
    const txs = await pool(50, 10, () => transact(t, a));
    const sts = await pool(50, 10, () => stream(t, a));
    const ids = [...txs, ...sts].flatMap((r) => (r.id ? [r.id] : []));
    const s = await settle(ids, start);
    expect(ids.every((id) => s.recs.get(id)?.status === "failed")).toBe(true);
    record({
      fault: "upstream resets mid-body (50 transactional + 50 streaming)",
      calls: 100,
      lost: s.lost,
      stuck: s.stuck,
      repeated: s.repeated,
      ranAfterError: 0,
      errors: sts.filter((r) => r.whole).length,
      recoverMs: 0,
      note: "all failed (upstream_5xx), each upstream call made once",
    });
  });

  it("client aborts mid-download: failed/cancelled with the bytes delivered", async () => {
    const t = await tenant();
    const a = await agent(t, { upstream_url: `${up.url}/long?ms=5000` });
    const start = Date.now();
    const sts = await pool(100, 50, () => stream(t, a, { abortAfterFirstChunk: true }));
    const ids = sts.flatMap((r) => (r.id ? [r.id] : []));
    const s = await settle(ids, start);
    const cancelled = ids.filter((id) => {
      const r = s.recs.get(id);
      return r?.status === "failed" && r.error_class === "cancelled" && (r.resp_size ?? 0) > 0;
    });
    expect(cancelled.length).toBe(ids.length);
    record({
      fault: "client aborts mid-download (100 streams)",
      calls: 100,
      lost: s.lost + (100 - ids.length),
      stuck: s.stuck,
      repeated: s.repeated,
      ranAfterError: 0,
      errors: 0,
      recoverMs: 0,
      note: "every record failed/cancelled with resp_size > 0",
    });
  });

  it("1,000 concurrent streams", async () => {
    const t = await tenant();
    const a = await agent(t, { upstream_url: `${up.url}/sse` });
    const start = Date.now();
    const sts = await Promise.all(Array.from({ length: 1000 }, () => stream(t, a)));
    const ids = sts.flatMap((r) => (r.id ? [r.id] : []));
    const s = await settle(ids, start);
    const whole = sts.filter((r) => r.status === 200 && r.whole && r.bytes === 27).length;
    expect(whole).toBe(1000);
    expect(ids.every((id) => s.recs.get(id)?.status === "succeeded")).toBe(true);
    record({
      fault: "1,000 concurrent SSE streams",
      calls: 1000,
      lost: s.lost + (1000 - ids.length),
      stuck: s.stuck,
      repeated: s.repeated,
      ranAfterError: 0,
      errors: 1000 - whole,
      recoverMs: 0,
      note: `all delivered whole in ${((Date.now() - start) / 1000).toFixed(1)} s`,
    });
  });

  it("one tenant's slow uploads beside another tenant's calls: tenant Y unaffected", async () => {
    const x = await tenant();
    const y = await tenant();
    const xa = await agent(x, { upstream_url: `${up.url}/sink`, max_concurrency: 40 });
    const ya = await agent(y, { upstream_url: `${up.url}/ok` });
    const yCall = async () => {
      const t0 = performance.now();
      const r = await stream(y, ya);
      return { ...r, ms: performance.now() - t0 };
    };
    const baseline = await pool(50, 5, yCall);
    // 60 uploads from X, each 10 chunks 300 ms apart: 40 admitted, the rest refused 429.
    const uploads = Array.from({ length: 60 }, () => slowUpload(x, xa, 10, 300));
    await sleep(500);
    const during = await pool(100, 5, yCall);
    const xs = await Promise.all(uploads);
    const ids = [...baseline, ...during].flatMap((r) => (r.id ? [r.id] : []));
    const xIds = xs.flatMap((r) => (r.id ? [r.id] : []));
    const s = await settle([...ids, ...xIds], Date.now());
    const yFailed = during.filter((r) => r.status !== 200 || !r.whole).length;
    expect(yFailed).toBe(0);
    expect(xs.filter((r) => r.status === 429).length).toBe(20);
    const p50 = (v: number[]) => v.sort((a, b) => a - b)[Math.floor(v.length / 2)] ?? 0;
    record({
      fault: "tenant X: 60 slow uploads (limit 40) beside tenant Y's calls",
      calls: 60 + 150,
      lost: s.lost,
      stuck: s.stuck,
      repeated: s.repeated,
      ranAfterError: 0,
      errors: yFailed,
      recoverMs: 0,
      note: `X: ${xIds.length} admitted, ${xs.filter((r) => r.status === 429).length} refused 429; Y p50 ${p50(baseline.map((r) => r.ms)).toFixed(0)} ms alone, ${p50(during.map((r) => r.ms)).toFixed(0)} ms beside X`,
    });
  });

  it("SIGTERM with long streams: streams within GW_SHUTDOWN_TIMEOUT_MS finish, the rest end cancelled", async () => {
    const t = await tenant();
    const short = await agent(t, { upstream_url: `${up.url}/long?ms=6000` });
    const long = await agent(t, { upstream_url: `${up.url}/long?ms=120000` });
    const shorts = Array.from({ length: 20 }, () => stream(t, short));
    const longs = Array.from({ length: 10 }, () => stream(t, long));
    await sleep(1_000);
    const t0 = Date.now();
    const code = await proxy.kill("SIGTERM");
    const exitedMs = Date.now() - t0;
    const [ss, ls] = await Promise.all([Promise.all(shorts), Promise.all(longs)]);
    const ids = [...ss, ...ls].flatMap((r) => (r.id ? [r.id] : []));
    const s = await settle(ids, Date.now(), 10_000);
    const finished = ss.filter((r) => r.whole).length;
    const cut = ls.filter((r) => !r.whole).length;
    expect(code).toBe(0);
    expect(finished).toBe(20);
    expect(ls.every((r) => r.id && s.recs.get(r.id)?.status === "failed")).toBe(true);
    await proxy.restart();
    record({
      fault: "SIGTERM proxy with 30 streams (GW_SHUTDOWN_TIMEOUT_MS 12 s)",
      calls: 30,
      lost: s.lost,
      stuck: s.stuck,
      repeated: s.repeated,
      ranAfterError: 0,
      errors: 0,
      recoverMs: 0,
      note: `${finished} 6 s streams finished whole, ${cut} 120 s streams cut and recorded; exit 0 after ${(exitedMs / 1000).toFixed(1)} s`,
    });
  });
});

/** A chunked streaming upload, one chunk every `everyMs`. */
function slowUpload(
  t: Tenant,
  agentId: string,
  chunks: number,
  everyMs: number,
): Promise<{ id?: string; status: number }> {
  return new Promise((resolve) => {
    const req = request(`${proxy.url}/v1/proxy/${agentId}/stream`, {
      method: "POST",
      headers: { authorization: `Bearer ${t.token}`, "transfer-encoding": "chunked" },
    });
    req.on("response", (res) => {
      const id = res.headers["x-gateway-invocation-id"];
      res.resume();
      res.on("end", () =>
        resolve({ ...(typeof id === "string" ? { id } : {}), status: res.statusCode ?? 0 }),
      );
      res.on("error", () => resolve({ status: res.statusCode ?? 0 }));
    });
    req.on("error", () => resolve({ status: 0 }));
    let sent = 0;
    const tick = () => {
      if (req.destroyed) return;
      if (sent++ >= chunks) {
        req.end();
        return;
      }
      req.write("y".repeat(1024));
      setTimeout(tick, everyMs);
    };
    tick();
  });
}
