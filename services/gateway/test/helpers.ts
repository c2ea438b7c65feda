import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import {
  client,
  newTenant,
  type Res,
  serveApp,
  startUpstream,
  type TestApp,
  testEnv,
  token,
  type Upstream,
} from "@gw/testkit";
import { createGateway } from "../src/app.ts";

/** The all-in-one gateway (control plane + proxy + in-process worker) on real stores. */
export function startGateway(env: Record<string, string | undefined> = {}): Promise<TestApp> {
  return serveApp(createGateway, env, "gateway");
}

export type Caller = ((
  method: string,
  path: string,
  body?: unknown,
  headers?: Record<string, string>,
) => Promise<Res>) & {
  tenant: string;
  token: string;
};

export async function caller(app: TestApp, scopes: string[] = [], tenant = newTenant()): Promise<Caller> {
  const t = await token(tenant, "user-1", scopes);
  return Object.assign(client(app.url, t), { tenant, token: t });
}

export async function createAgent(call: Caller, body: Record<string, unknown>): Promise<string> {
  const res = await call("POST", "/v1/agents", { name: "agent", ...body });
  if (res.status !== 201) throw new Error(`agent create failed: ${res.status} ${res.text}`);
  return res.json.id as string;
}

/** Polls the transactional result until the invocation is terminal. */
export async function pollDone(call: Caller, agentId: string, invocationId: string): Promise<Res> {
  const until = Date.now() + 20_000;
  for (;;) {
    const res = await call("GET", `/v1/proxy/${agentId}/invocations/${invocationId}`);
    if (res.status !== 200) return res;
    if (res.json.status === "succeeded" || res.json.status === "failed") return res;
    if (Date.now() > until) throw new Error(`invocation still ${res.json.status}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

/** Reads an invocation record until it is terminal (streaming outcomes are written after the response). */
export async function recordDone(call: Caller, invocationId: string): Promise<Res> {
  const until = Date.now() + 20_000;
  for (;;) {
    const res = await call("GET", `/v1/invocations/${invocationId}`);
    if (res.status === 200 && (res.json.status === "succeeded" || res.json.status === "failed")) return res;
    if (Date.now() > until) throw new Error(`invocation not terminal: ${res.status} ${res.text}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

/** Local upstreams for one suite: `up` starts one, `closeAll` stops every one started. */
export function upstreamPool() {
  const started: Upstream[] = [];
  return {
    up: async (...args: Parameters<typeof startUpstream>) => {
      const u = await startUpstream(...args);
      started.push(u);
      return u;
    },
    closeAll: () => Promise.all(started.map((u) => u.close())),
  };
}

/**
 * The gateway as its own process (`pnpm start`'s entry), for tests of signals and exporters.
 * Resolves once it logs the port it listens on; `output()` is everything it wrote to stdout.
 */
export async function spawnGateway(env: Record<string, string | undefined> = {}, args: string[] = []) {
  const repo = fileURLToPath(new URL("../../../", import.meta.url));
  const child = spawn(process.execPath, ["--import", "tsx", "services/gateway/src/main.ts", ...args], {
    cwd: repo,
    env: { ...process.env, ...(testEnv(env) as Record<string, string>), PORT: "0", GW_LOG_LEVEL: "info" },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  let err = "";
  child.stdout.on("data", (d) => {
    out += d.toString();
  });
  // The start banner (token, ready calls) goes to stderr.
  child.stderr.on("data", (d) => {
    err += d.toString();
  });
  const port = await new Promise<number>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`gateway did not start: ${out}`)), 30_000);
    child.stdout.on("data", () => {
      const m = /"port":(\d+),"store"/.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve(Number(m[1]));
      }
    });
    child.once("exit", () => reject(new Error(`gateway exited before listening: ${out}`)));
  }).catch((e: unknown) => {
    child.kill("SIGKILL");
    throw e;
  });
  return { child, url: `http://127.0.0.1:${port}`, output: () => out, stderr: () => err };
}
