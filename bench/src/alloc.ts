// `pnpm bench:alloc [--no-build] [--no-sample] [--survivors] [--seconds n] [--top n]`: what one small streaming call allocates
// in the proxy process, the gateway's and the bare proxy's side by side: bytes (exact, from the
// heap before each GC) and GCs over one c=64 window as the bench's `stream` step, then objects (a
// sampled estimate: slow) and the sites that allocate most over a second, c=8 window. With
// `--survivors` the second window (c=64) samples only objects that outlived the young generation:
// the sites whose objects get promoted. See docs/performance.md.
import type { ChildProcess } from "node:child_process";
import { fileURLToPath } from "node:url";
import { build, deploy, SMALL_PATHS, storesOrExplain } from "./deploy.ts";
import { load } from "./load.ts";
import { probeWindow, runMain } from "./probe.ts";

const argv = process.argv.slice(2);
const arg = (name: string, fallback: number) => {
  const at = argv.indexOf(name);
  return at >= 0 ? Number(argv[at + 1]) : fallback;
};
const SECONDS = arg("--seconds", 5);
const TOP = arg("--top", 25);
const PROBE = fileURLToPath(new URL("alloc-probe.cjs", import.meta.url));

type Probe = {
  allocated: number;
  gcs: Record<string, number>;
  gcCost: number;
  survived: number;
  promoted: number;
  sampledObjects?: number;
  sampledBytes?: number;
  top?: [string, { objects: number; bytes: number }][];
};

function measured(proc: ChildProcess, sample: boolean, run: () => Promise<number>) {
  const mode = argv.includes("--survivors") ? "survivors" : "";
  return probeWindow<Probe>(proc, "gw-alloc", "sample", sample, run, mode);
}

async function main(): Promise<number> {
  const stores = await storesOrExplain();
  if (!stores) return 1;
  if (!argv.includes("--no-build")) build();
  const d = await deploy({
    ...stores,
    proxyArgs: ["--require", PROBE],
    paths: SMALL_PATHS,
  });
  const spec = (url: string, seconds: number, connections = 64) => ({
    url,
    headers: { authorization: `Bearer ${d.token}`, "content-type": "application/json" },
    body: JSON.stringify({ prompt: "hello", n: 1 }),
    connections,
    seconds,
  });
  const targets = {
    bare: { url: `${d.bare}/echo`, proc: d.bareProc },
    gateway: { url: `${d.proxy}/v1/proxy/${d.agents.echo}/stream`, proc: d.proxyProc },
  };
  const per = (n: number, calls: number) => (n / calls).toFixed(0);
  for (const [name, t] of Object.entries(targets)) {
    await load(spec(t.url, 2)); // warm-up: JIT, pools, caches
    const window = (sample: boolean, connections: number) =>
      measured(t.proc, sample, async () => {
        const res = await load(spec(t.url, SECONDS, connections));
        if (res.errors > 0) throw new Error(`${name}: ${res.errors} failed requests`);
        return res.requests;
      });
    const r = await window(false, 64);
    const gcs = Object.entries(r.gcs)
      .map(([k, v]) => `${k} ${v}`)
      .join(", ");
    console.log(
      `${name}: ${r.calls} calls; per call: ${per(r.allocated, r.calls)} B allocated; GCs: ${gcs}; GC wall time ${(r.gcCost / r.calls).toFixed(1)} µs per call; scavenges kept ${per(r.survived, r.calls)} B and promoted ${per(r.promoted, r.calls)} B per call`,
    );
    if (argv.includes("--no-sample")) continue;
    // Survivors are what a full load keeps in flight: sampled at c=64, as the exact window.
    const s = await window(true, argv.includes("--survivors") ? 64 : 8);
    console.log(
      `${name}, sampled: ${s.calls} calls; per call ~${per(s.sampledObjects ?? 0, s.calls)} objects, ~${per(s.sampledBytes ?? 0, s.calls)} B (exact: ${per(s.allocated, s.calls)} B)`,
    );
    if (name === "gateway")
      for (const [site, x] of s.top?.slice(0, TOP) ?? [])
        console.log(
          `  ${per(x.bytes, s.calls).padStart(6)} B ${per(x.objects, s.calls).padStart(4)} obj  ${site}`,
        );
  }
  return 0;
}

runMain(main);
