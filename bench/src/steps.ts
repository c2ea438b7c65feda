// `pnpm bench:steps [--no-build] [--seconds n] [--json file]`: where one small streaming call's CPU
// and allocations go in the proxy process, per pipeline step and per package or library (docs/performance.md,
// "Per-step costs"). The proxy of the bench's split deployment runs with `steps-probe.cjs`: one
// window under the V8 CPU profiler, one under the sampling heap profiler, both at c=64 as the
// `stream` rows. A step's figure includes what it calls (a library, the store driver); the
// second table says who burnt it. The profilers cost time themselves: read shares, and the
// proxy's CPU per call measured without a profiler (first line) as the total.
import type { ChildProcess } from "node:child_process";
import { writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { build, deploy, SMALL_PATHS, storesOrExplain } from "./deploy.ts";
import { load } from "./load.ts";
import { probeWindow, runMain } from "./probe.ts";
import { cpuMsOf } from "./procs.ts";

const argv = process.argv.slice(2);
const at = argv.indexOf("--seconds");
const SECONDS = at >= 0 ? Number(argv[at + 1]) : 6;
const jsonAt = argv.indexOf("--json");
const PROBE = fileURLToPath(new URL("steps-probe.cjs", import.meta.url));

type Probe = {
  kind: "cpu" | "alloc";
  total: number;
  byStep: Record<string, number>;
  byOwner: Record<string, number>;
  byFunction: Record<string, number>;
};

function profiled(proc: ChildProcess, alloc: boolean, run: () => Promise<number>) {
  return probeWindow<Probe>(proc, "gw-steps", "alloc", alloc, run);
}

/** Rows of a probe, largest first, scaled to `perCall` (its total per call); at most `top` printed. */
function table(
  title: string,
  unit: string,
  of: Record<string, number>,
  total: number,
  perCall: number,
  top = Number.POSITIVE_INFINITY,
) {
  console.log(`\n${title}`);
  const rows = Object.entries(of).sort((a, b) => b[1] - a[1]);
  for (const [k, v] of rows.slice(0, top)) {
    const share = v / total;
    if (share < 0.005) continue;
    console.log(
      `  ${(share * perCall).toFixed(1).padStart(8)} ${unit}  ${(share * 100).toFixed(1).padStart(5)} %  ${k}`,
    );
  }
  return Object.fromEntries(rows.map(([k, v]) => [k, (v / total) * perCall]));
}

async function main(): Promise<number> {
  const stores = await storesOrExplain();
  if (!stores) return 1;
  if (!argv.includes("--no-build")) build();
  const d = await deploy({
    ...stores,
    proxyArgs: ["--enable-source-maps", "--require", PROBE],
    paths: SMALL_PATHS,
  });
  const spec = (seconds: number) => ({
    url: `${d.proxy}/v1/proxy/${d.agents.echo}/stream`,
    headers: { authorization: `Bearer ${d.token}`, "content-type": "application/json" },
    body: JSON.stringify({ prompt: "hello", n: 1 }),
    connections: 64,
    seconds,
  });
  const pid = d.proxyProc.pid as number;
  await load(spec(3)); // warm-up: JIT, pools, caches
  const before = cpuMsOf(pid);
  const plain = await load(spec(SECONDS));
  if (plain.errors > 0) throw new Error(`${plain.errors} failed requests`);
  const cpuPerCall = ((cpuMsOf(pid) - before) * 1000) / plain.requests;
  console.log(
    `proxy CPU per call, no profiler: ${cpuPerCall.toFixed(0)} µs (${plain.requests} calls at c=64)`,
  );
  const window = (alloc: boolean) =>
    profiled(d.proxyProc, alloc, async () => {
      const res = await load(spec(SECONDS));
      if (res.errors > 0) throw new Error(`${res.errors} failed requests`);
      return res.requests;
    });
  const cpu = await window(false);
  const alloc = await window(true);
  const bytesPerCall = alloc.total / alloc.calls;
  const out = {
    cpuPerCall,
    bytesPerCall,
    cpuByStep: table(
      "CPU per call, by step (what a step calls included)",
      "µs",
      cpu.byStep,
      cpu.total,
      cpuPerCall,
    ),
    cpuByOwner: table(
      "CPU per call, by who burnt it (the leaf frame)",
      "µs",
      cpu.byOwner,
      cpu.total,
      cpuPerCall,
    ),
    bytesByStep: table(
      `allocated per call (~${bytesPerCall.toFixed(0)} B, sampled), by step`,
      "B ",
      alloc.byStep,
      alloc.total,
      bytesPerCall,
    ),
    bytesByOwner: table(
      "allocated per call, by who allocated it",
      "B ",
      alloc.byOwner,
      alloc.total,
      bytesPerCall,
    ),
    cpuByFunction: table(
      "CPU per call, the leaf functions that burnt most (top 25)",
      "µs",
      cpu.byFunction,
      cpu.total,
      cpuPerCall,
      25,
    ),
    bytesByFunction: table(
      "allocated per call, the functions that allocated most (top 25)",
      "B ",
      alloc.byFunction,
      alloc.total,
      bytesPerCall,
      25,
    ),
  };
  if (jsonAt >= 0) writeFileSync(argv[jsonAt + 1] as string, JSON.stringify(out, null, 2));
  return 0;
}

runMain(main);
