import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { fileURLToPath } from "node:url";
import { serveApp, type TestApp, testEnv } from "@gw/testkit";
import { createGateway } from "../src/app.ts";

export { type Caller, caller, createAgent, pollDone, recordDone, upstreamPool } from "@gw/testkit";

/** The all-in-one gateway (control plane + proxy + in-process worker) on real stores. */
export function startGateway(env: Record<string, string | undefined> = {}): Promise<TestApp> {
  return serveApp(createGateway, env, "gateway");
}

const REPO = fileURLToPath(new URL("../../../", import.meta.url));

/** `node --import <this> <file.ts>` runs TypeScript from any working directory. */
export const TSX = new URL("node_modules/tsx/dist/loader.mjs", `file://${REPO}`).href;

/**
 * The gateway as its own process (`pnpm start`'s entry), for tests of signals and exporters.
 * Resolves once it logs the port it listens on; `output()` is everything it wrote to stdout.
 * `cwd` is the repository unless given (the data directory's default is under it).
 */
export async function spawnGateway(
  env: Record<string, string | undefined> = {},
  args: string[] = [],
  opts: { cwd?: string } = {},
) {
  const main = fileURLToPath(new URL("../src/main.ts", import.meta.url));
  const child = spawn(process.execPath, ["--import", TSX, main, ...args], {
    cwd: opts.cwd ?? REPO,
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
    // Generous: the embedded store's migrations on a loaded 2-core machine take tens of seconds.
    const timer = setTimeout(() => reject(new Error(`gateway did not start: ${out}`)), 180_000);
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

export type PnpmRun = {
  child: ChildProcess;
  stdout: () => string;
  stderr: () => string;
  exited: Promise<number | null>;
};

/**
 * `pnpm <script> <args>` (`start` or `demo`) as a user runs it, from the repository, in a process
 * group of its own: a signal to `-child.pid` is what Ctrl-C in a terminal sends, and `groupAlive`
 * tells when all of it is gone.
 */
export function pnpmRun(
  script: "start" | "demo",
  env: Record<string, string | undefined>,
  args: string[] = [],
): PnpmRun {
  const merged: Record<string, string> = {};
  for (const [k, v] of Object.entries({ ...process.env, ...testEnv(env) }))
    if (v !== undefined) merged[k] = v;
  const child = spawn("pnpm", [script, ...args], {
    cwd: REPO,
    env: merged,
    detached: true,
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  let err = "";
  child.stdout?.on("data", (d) => {
    out += d.toString();
  });
  child.stderr?.on("data", (d) => {
    err += d.toString();
  });
  const exited = once(child, "exit").then(([code]) => code as number | null);
  return { child, stdout: () => out, stderr: () => err, exited };
}

/** True while any process of the group `pgid` is alive. */
export function groupAlive(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
    return true;
  } catch {
    return false;
  }
}

/**
 * A local OTLP/HTTP collector for a spawned gateway's exporters: `endpoint` goes in
 * OTEL_EXPORTER_OTLP_ENDPOINT; `metrics` holds every metrics export it received, as sent.
 */
export async function startOtlpCollector(): Promise<{
  endpoint: string;
  metrics: string[];
  close: () => void;
}> {
  const metrics: string[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      if (req.url === "/v1/metrics") metrics.push(Buffer.concat(chunks).toString("utf8"));
      res.writeHead(200, { "content-type": "application/json" }).end("{}");
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const { port } = server.address() as AddressInfo;
  return { endpoint: `http://127.0.0.1:${port}`, metrics, close: () => server.close() };
}
