import { type ChildProcess, execFileSync } from "node:child_process";
import { randomUUID } from "node:crypto";
import { connect } from "node:net";
import { mintDevToken } from "@gw/auth";
import { socketUrl } from "@gw/db";
import { freePort, ROOT, spawnHelper, spawnService } from "./procs.ts";

export const BENCH_JWT_SECRET = "bench-secret-that-is-at-least-32-characters-long";
const SECRET = BENCH_JWT_SECRET;
export const DEFAULT_DATABASE_URL = "postgres://postgres@127.0.0.1:5432/test";
export const DEFAULT_REDIS_URL = "redis://127.0.0.1:6379";

export type Agents = { echo: string; sink: string; source: string; sse: string; transact: string };
/** MCP agents for the virtual-server rows: four members on the upstream's /mcp and the virtual server over them. */
export type McpAgents = { members: string[]; virtual: string };
export type Deployment = {
  upstream: string;
  bare: string;
  proxy: string;
  controlPlane: string;
  proxyProc: ChildProcess;
  workerProc: ChildProcess;
  upstreamProc: ChildProcess;
  bareProc: ChildProcess;
  token: string;
  /** The run's tenant (the token's). */
  tenant: string;
  agents: Agents;
  mcp: McpAgents;
};

function reachable(url: string, defaultPort: number): Promise<boolean> {
  const u = new URL(url);
  // A DATABASE_URL may name a Unix socket (socketUrl, @gw/db): probe the socket itself.
  const path = socketUrl(url).path;
  return new Promise((resolve) => {
    const s = path ? connect({ path }) : connect({ host: u.hostname, port: Number(u.port || defaultPort) });
    s.setTimeout(2_000, () => {
      s.destroy();
      resolve(false);
    });
    s.once("connect", () => {
      s.end();
      resolve(true);
    });
    s.once("error", () => resolve(false));
  });
}

/** DATABASE_URL / REDIS_URL, or the local defaults (said so); null and one clear line when unreachable. */
export async function storesOrExplain(): Promise<{ databaseUrl: string; redisUrl: string } | null> {
  const databaseUrl = process.env.DATABASE_URL || DEFAULT_DATABASE_URL;
  const redisUrl = process.env.REDIS_URL || DEFAULT_REDIS_URL;
  if (!process.env.DATABASE_URL) console.log(`DATABASE_URL is not set: using ${databaseUrl}`);
  if (!process.env.REDIS_URL) console.log(`REDIS_URL is not set: using ${redisUrl}`);
  const [pg, redis] = await Promise.all([reachable(databaseUrl, 5432), reachable(redisUrl, 6379)]);
  if (!pg || !redis) {
    const what = [!pg && `Postgres (${databaseUrl})`, !redis && `Redis (${redisUrl})`].filter(Boolean);
    console.error(
      `bench: cannot reach ${what.join(" and ")}; set DATABASE_URL / REDIS_URL to a running instance`,
    );
    return null;
  }
  return { databaseUrl, redisUrl };
}

export function build(): void {
  execFileSync("pnpm", ["build"], { cwd: ROOT, stdio: ["ignore", "ignore", "inherit"] });
}

/**
 * Starts the upstream, the bare proxy and the split deployment (control-plane, proxy, worker as
 * separate processes from their bundles), then creates the tenant's agents.
 */
/** The agents' upstream paths of the probes' deployments: one small answer each (`steps`, `alloc`, `ab`, `steps-compare`). */
export const SMALL_PATHS = {
  echo: "/echo",
  sink: "/sink",
  source: "/source?bytes=1",
  sse: "/sse?n=1&every=5",
  transact: "/echo",
};

export async function deploy(opts: {
  databaseUrl: string;
  redisUrl: string;
  profileDir?: string | undefined;
  /** Node flags of the proxy and the bare proxy (the allocation probe, `alloc.ts`). */
  proxyArgs?: string[];
  /** Environment of the proxy alone (GW_PROXY_TIMELINE, `--timeline`). */
  proxyEnv?: Record<string, string> | undefined;
  /** Upstream paths of the agents (the same paths direct and through the bare proxy). */
  paths: Record<keyof Agents, string>;
}): Promise<Deployment> {
  const up = await spawnHelper("upstream.ts");
  const upstream = `http://127.0.0.1:${up.port}`;
  // Node flags for an A/B of the proxy's runtime (`GW_BENCH_PROXY_NODE_FLAGS="--max-semi-space-size=32"`),
  // given to the bare proxy too, so the floor is measured with the same runtime.
  const flags = process.env.GW_BENCH_PROXY_NODE_FLAGS?.split(" ").filter(Boolean) ?? [];
  const proxyArgs = [...flags, ...(opts.proxyArgs ?? [])];
  const bareProc = await spawnHelper("bare-proxy.ts", [upstream], proxyArgs);
  const [cpPort, proxyPort, workerPort] = [await freePort(), await freePort(), await freePort()];
  const env = {
    DATABASE_URL: opts.databaseUrl,
    REDIS_URL: opts.redisUrl,
    GW_DEV_JWT_SECRET: SECRET,
    GW_ALLOW_HTTP_UPSTREAMS: "true",
    GW_SSRF_ALLOW_CIDRS: "127.0.0.0/8",
    GW_LOG_LEVEL: "warn",
    GW_QUEUE_NAME: `bench-${randomUUID()}`,
    // The limiter must not be what is measured.
    GW_RATE_LIMIT_RPS: "1000000",
    GW_RATE_LIMIT_BURST: "1000000",
    GW_KMS_KEY: Buffer.alloc(32, 7).toString("base64"),
    // Passed through for an A/B of the worker's priority (docs/performance.md).
    ...(process.env.GW_WORKER_NICE ? { GW_WORKER_NICE: process.env.GW_WORKER_NICE } : {}),
    ...(process.env.GW_PROXY_PROCESSES ? { GW_PROXY_PROCESSES: process.env.GW_PROXY_PROCESSES } : {}),
  };
  // The control plane migrates first, so the others start on a ready schema.
  await spawnService("control-plane", { ...env, PORT: String(cpPort) });
  // The proxy and the worker are profiled (each writes `<role>.cpuprofile` when it stops).
  const profile = (role: string) =>
    opts.profileDir
      ? ["--cpu-prof", `--cpu-prof-dir=${opts.profileDir}`, `--cpu-prof-name=${role}.cpuprofile`]
      : [];
  const [proxyProc, workerProc] = await Promise.all([
    spawnService("proxy", { ...env, ...opts.proxyEnv, PORT: String(proxyPort) }, [
      ...proxyArgs,
      ...profile("proxy"),
    ]),
    spawnService("worker", { ...env, PORT: String(workerPort) }, profile("worker")),
  ]);
  const controlPlane = `http://127.0.0.1:${cpPort}`;
  const tenant = `bench-${randomUUID()}`;
  const token = await mintDevToken(SECRET, {
    tenant,
    sub: "bench",
    ttlSeconds: 6 * 3600,
  });
  const create = async (name: string, path: string, extra: Record<string, unknown> = {}) => {
    const res = await fetch(`${controlPlane}/v1/agents`, {
      method: "POST",
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      body: JSON.stringify({ name, upstream_url: `${upstream}${path}`, ...extra }),
    });
    if (res.status !== 201) throw new Error(`creating agent ${name}: ${res.status} ${await res.text()}`);
    return ((await res.json()) as { id: string }).id;
  };
  const agents: Agents = {
    echo: await create("bench-echo", opts.paths.echo),
    sink: await create("bench-sink", opts.paths.sink),
    source: await create("bench-source", opts.paths.source),
    sse: await create("bench-sse", opts.paths.sse),
    transact: await create("bench-transact", opts.paths.transact),
  };
  const members: string[] = [];
  for (let i = 0; i < 4; i++) members.push(await create(`bench-mcp-${i}`, "/mcp", { protocol: "mcp" }));
  const virtualRes = await fetch(`${controlPlane}/v1/agents`, {
    method: "POST",
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
    body: JSON.stringify({
      name: "bench-virtual",
      protocol: "mcp",
      members: members.map((agent_id, i) => ({ agent_id, prefix: `m${i}` })),
    }),
  });
  if (virtualRes.status !== 201) throw new Error(`creating the virtual agent: ${virtualRes.status}`);
  const mcp: McpAgents = { members, virtual: ((await virtualRes.json()) as { id: string }).id };
  return {
    upstream,
    bare: `http://127.0.0.1:${bareProc.port}`,
    proxy: `http://127.0.0.1:${proxyPort}`,
    controlPlane,
    proxyProc,
    workerProc,
    upstreamProc: up.child,
    bareProc: bareProc.child,
    token,
    tenant,
    agents,
    mcp,
  };
}

/**
 * A tenant of its own for one bench step (`bench-<name>-…`, removed when the run ends): its token,
 * and a control-plane caller that throws on any answer other than 2xx.
 */
export async function benchTenant(d: Deployment, name: string) {
  const token = await mintDevToken(BENCH_JWT_SECRET, {
    tenant: `bench-${name}-${Date.now()}`,
    sub: "bench",
    ttlSeconds: 6 * 3600,
  });
  const call = async (method: string, path: string, body: unknown): Promise<{ id?: string }> => {
    const res = await fetch(`${d.controlPlane}${path}`, {
      method,
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      body: JSON.stringify(body),
    });
    if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${await res.text()}`);
    return (await res.json()) as { id?: string };
  };
  return { token, call };
}
