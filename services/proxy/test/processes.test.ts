// @stores once: Postgres and Redis only: several proxy processes.
import { type ChildProcess, spawn } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { freePort, type TestApp, testEnv } from "@gw/testkit";
import { request } from "undici";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Caller, caller, createAgent, startGateway, upstreamPool } from "./helpers.ts";

// GW_PROXY_PROCESSES (docs/performance.md): one supervisor, N proxy processes on one port. The
// processes share Postgres and Redis, so the suite needs both.
const shared = Boolean(process.env.DATABASE_URL && process.env.REDIS_URL);
const REPO = fileURLToPath(new URL("../../../", import.meta.url));

/** Runs `check` until it passes (its last failure is thrown after `ms`). */
async function until(check: () => unknown, ms: number): Promise<void> {
  const end = Date.now() + ms;
  for (;;) {
    try {
      await check();
      return;
    } catch (e) {
      if (Date.now() > end) throw e;
      await new Promise((r) => setTimeout(r, 100));
    }
  }
}

/** The pids of the proxy processes whose parent is `pid`. */
function childrenOf(pid: number): number[] {
  const out: number[] = [];
  for (const p of readdirSync("/proc")) {
    if (!/^\d+$/.test(p)) continue;
    try {
      const stat = readFileSync(`/proc/${p}/stat`, "utf8");
      const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
      // The proxy processes, not the tsx loader's esbuild helper.
      if (ppid === pid && readFileSync(`/proc/${p}/cmdline`, "utf8").includes("proxy/src/main.ts"))
        out.push(Number(p));
    } catch {
      // gone meanwhile
    }
  }
  return out;
}

function spawnProxy(env: Record<string, string | undefined>) {
  const merged: Record<string, string | undefined> = { ...process.env, ...testEnv(env) };
  // A variable given as undefined is not set at all.
  for (const [k, v] of Object.entries(env)) if (v === undefined) delete merged[k];
  const child = spawn(process.execPath, ["--import", "tsx", "services/proxy/src/main.ts"], {
    cwd: REPO,
    env: merged as Record<string, string>,
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  child.stdout?.on("data", (d) => {
    out += d.toString();
  });
  child.stderr?.on("data", (d) => {
    out += d.toString();
  });
  const exited = new Promise<number | null>((r) => child.once("exit", (code) => r(code)));
  return { child, output: () => out, exited };
}

const live = new Set<ChildProcess>();
afterAll(() => {
  for (const c of live) c.kill("SIGKILL");
});

describe.skipIf(!shared)("GW_PROXY_PROCESSES (needs Postgres and Redis)", () => {
  let gw: TestApp;
  let call: Caller;
  const { up, closeAll } = upstreamPool();
  beforeAll(async () => {
    gw = await startGateway();
    call = await caller(gw);
  });
  afterAll(async () => {
    await gw?.close();
    await closeAll();
  });

  it("serves one port from N processes, replaces one that dies, and drains every one on SIGTERM", async () => {
    let release: () => void = () => {};
    const held = new Promise<void>((r) => {
      release = r;
    });
    const u = await up(async (req, res, body) => {
      if (req.url?.includes("slow")) await held;
      res.end(`pid-echo:${body.toString()}`);
    });
    const fast = await createAgent(call, { upstream_url: `${u.url}/fast` });
    const slow = await createAgent(call, { upstream_url: `${u.url}/slow` });
    const port = await freePort();
    const proxy = spawnProxy({
      PORT: String(port),
      GW_PROXY_PROCESSES: "3",
      GW_SHUTDOWN_TIMEOUT_MS: "20000",
      // The 23 calls below must not meet the per-agent rate limit.
      GW_RATE_LIMIT_RPS: "1000",
      GW_RATE_LIMIT_BURST: "1000",
    });
    live.add(proxy.child);
    const supervisor = proxy.child.pid as number;
    const base = `http://127.0.0.1:${port}`;
    const callOn = (agent: string, body: string) =>
      request(`${base}/v1/proxy/${agent}/stream`, {
        method: "POST",
        headers: { authorization: `Bearer ${call.token}` },
        body,
        headersTimeout: 10_000,
        // A new connection each: one kept alive to the process killed below would die with it.
        reset: true,
      });
    const listening = () => proxy.output().split('"msg":"proxy listening"').length - 1;
    // Each process loads the proxy from source: on a busy 2-core machine that takes a while.
    await until(() => expect(listening()).toBe(3), 150_000);
    expect(childrenOf(supervisor)).toHaveLength(3);
    const res0 = await callOn(fast, "one");
    expect(await res0.body.text()).toBe("pid-echo:one");

    // One process dies: the port stays served, and another takes its place.
    const first = childrenOf(supervisor);
    process.kill(first[0] as number, "SIGKILL");
    // A connection handed to a process in the instant it dies is lost with it (as with any one
    // process that crashes); once the supervisor saw the death, new connections go to the others.
    await until(() => expect(proxy.output()).toContain("a process died; starting another"), 10_000);
    for (let i = 0; i < 20; i++) {
      const res = await callOn(fast, `n${i}`);
      expect(res.statusCode).toBe(200);
      expect(await res.body.text()).toBe(`pid-echo:n${i}`);
    }
    await until(() => expect(listening()).toBe(4), 60_000);
    const now = childrenOf(supervisor);
    expect(now).toHaveLength(3);
    expect(now).not.toContain(first[0]);

    // SIGTERM to the supervisor with a call in flight: that call finishes, then every process exits.
    const inFlight = callOn(slow, "last");
    await until(() => expect(u.received.some((r) => r.url?.includes("slow"))).toBe(true), 10_000);
    const children = childrenOf(supervisor);
    proxy.child.kill("SIGTERM");
    await new Promise((r) => setTimeout(r, 300));
    release();
    const res = await inFlight;
    expect(res.statusCode).toBe(200);
    expect(await res.body.text()).toBe("pid-echo:last");
    expect(await proxy.exited).toBe(0);
    for (const pid of children) expect(() => process.kill(pid, 0)).toThrow();
    expect(proxy.output()).toContain("every process stopped");
  }, 300_000);
});

// What a crashed proxy loses (docs/reliability.md): a stream that outlived GW_STREAM_RECORD_DEFER_MS
// has its `running` row, so a SIGKILL leaves it for the sweeper; only younger streams leave nothing.
describe.skipIf(!shared)("a proxy process killed mid-stream (needs Postgres and Redis)", () => {
  let gw: TestApp;
  let call: Caller;
  const { up, closeAll } = upstreamPool();
  beforeAll(async () => {
    gw = await startGateway();
    call = await caller(gw);
  });
  afterAll(async () => {
    await gw?.close();
    await closeAll();
  });

  it("leaves the running row of a stream past its defer point, for the sweeper to end", async () => {
    // An SSE upstream that sends one event and never ends.
    const u = await up((_req, res) => {
      res.writeHead(200, { "content-type": "text/event-stream" });
      res.write("data: first\n\n");
    });
    const agent = await createAgent(call, { upstream_url: u.url });
    const port = await freePort();
    const deferMs = 100;
    const proxy = spawnProxy({ PORT: String(port), GW_STREAM_RECORD_DEFER_MS: String(deferMs) });
    live.add(proxy.child);
    await until(() => expect(proxy.output()).toContain('"msg":"proxy listening"'), 90_000);
    const res = await request(`http://127.0.0.1:${port}/v1/proxy/${agent}/stream`, {
      method: "POST",
      headers: { authorization: `Bearer ${call.token}` },
      body: "hello",
    });
    expect(res.statusCode).toBe(200);
    res.body.on("error", () => {}); // cut by the kill below
    const id = res.headers["x-gateway-invocation-id"] as string;
    const first = await new Promise<string>((r) => res.body.once("data", (d: Buffer) => r(d.toString())));
    expect(first).toContain("first");
    // Mid-stream, well past the defer point (a wait, not a measured duration).
    await new Promise((r) => setTimeout(r, deferMs + 900));
    proxy.child.kill("SIGKILL");
    await new Promise((r) => proxy.child.once("exit", r));
    const row = await call("GET", `/v1/invocations/${id}`);
    expect(row.status, row.text).toBe(200);
    expect(row.json).toMatchObject({ id, mode: "streaming", status: "running", completed_at: null });
  });
});

describe("GW_PROXY_PROCESSES: refusals", () => {
  it("refuses more than one process on the embedded store (nothing for the processes to share)", async () => {
    const proxy = spawnProxy({
      PORT: "0",
      GW_PROXY_PROCESSES: "2",
      DATABASE_URL: undefined,
      REDIS_URL: undefined,
    });
    live.add(proxy.child);
    expect(await proxy.exited).toBe(1);
    expect(proxy.output()).toContain("GW_PROXY_PROCESSES above 1 needs DATABASE_URL and REDIS_URL");
  });

  it("refuses a count that is not a whole number from 1 to 64", async () => {
    const proxy = spawnProxy({ PORT: "0", GW_PROXY_PROCESSES: "0" });
    live.add(proxy.child);
    expect(await proxy.exited).toBe(1);
    expect(proxy.output()).toContain(
      "invalid configuration: GW_PROXY_PROCESSES must be a whole number from 1 to 64",
    );
  });
});
