import { execFile, execFileSync } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";

const run = promisify(execFile);

export type LoadResult = { rps: number; p50: number; p99: number; requests: number; errors: number };
export type LoadSpec = {
  url: string;
  headers: Record<string, string>;
  /** The POST body; none: a GET. */
  body?: string | undefined;
  connections: number;
  seconds: number;
};

let wrkPath: string | null | undefined;
/** The system's wrk when installed (a C load generator: less CPU taken from the gateway), else null. */
export function wrk(): string | null {
  if (wrkPath === undefined) {
    try {
      wrkPath = execFileSync("sh", ["-c", "command -v wrk"], { encoding: "utf8" }).trim() || null;
    } catch {
      wrkPath = null;
    }
  }
  return wrkPath;
}

export function generatorName(): string {
  return wrk() ? "wrk" : "autocannon";
}

/** A closed-loop load run: `connections` callers, each sending its next request when answered. */
export function load(spec: LoadSpec): Promise<LoadResult> {
  return wrk() ? loadWrk(spec) : loadAutocannon(spec);
}

let scriptDir: string | undefined;

async function loadWrk(spec: LoadSpec): Promise<LoadResult> {
  scriptDir ??= mkdtempSync(join(tmpdir(), "gw-bench-"));
  const script = join(scriptDir, `s${Math.random().toString(36).slice(2)}.lua`);
  const headerLines = Object.entries(spec.headers)
    .map(([k, v]) => `wrk.headers[${JSON.stringify(k)}] = ${JSON.stringify(v)}`)
    .join("\n");
  // Latencies in wrk are microseconds; the non-2xx/3xx count comes from summary.errors.status.
  writeFileSync(
    script,
    `${spec.body === undefined ? 'wrk.method = "GET"' : `wrk.method = "POST"\nwrk.body = ${JSON.stringify(spec.body)}`}
${headerLines}
done = function(summary, latency, requests)
  local e = summary.errors
  io.write(string.format('{"requests":%d,"us":%d,"errors":%d,"p50":%f,"p99":%f}\\n',
    summary.requests, summary.duration, e.connect + e.read + e.write + e.status + e.timeout,
    latency:percentile(50), latency:percentile(99)))
end
`,
  );
  const { stdout } = await run(
    wrk() as string,
    ["-t1", `-c${spec.connections}`, `-d${spec.seconds}s`, "--timeout", "10s", "-s", script, spec.url],
    { maxBuffer: 1 << 20 },
  );
  const line = stdout.trim().split("\n").at(-1) ?? "{}";
  const r = JSON.parse(line) as { requests: number; us: number; errors: number; p50: number; p99: number };
  return {
    rps: r.requests / (r.us / 1e6),
    p50: r.p50 / 1000,
    p99: r.p99 / 1000,
    requests: r.requests,
    errors: r.errors,
  };
}

async function loadAutocannon(spec: LoadSpec): Promise<LoadResult> {
  const bin = createRequire(import.meta.url).resolve("autocannon/autocannon.js");
  const args = [
    bin,
    "-c",
    String(spec.connections),
    "-d",
    String(spec.seconds),
    "-m",
    spec.body === undefined ? "GET" : "POST",
    ...(spec.body === undefined ? [] : ["-b", spec.body]),
  ];
  for (const [k, v] of Object.entries(spec.headers)) args.push("-H", `${k}=${v}`);
  args.push("--json", spec.url);
  const { stdout } = await run(process.execPath, args, { maxBuffer: 16 << 20 });
  const r = JSON.parse(stdout) as {
    requests: { total: number };
    duration: number;
    errors: number;
    timeouts: number;
    non2xx: number;
    latency: { p50: number; p99: number };
  };
  return {
    rps: r.requests.total / r.duration,
    p50: r.latency.p50,
    p99: r.latency.p99,
    requests: r.requests.total,
    errors: r.errors + r.timeouts + r.non2xx,
  };
}
