// `pnpm bench:steps-compare <a2a-send|a2a-stream|policy|guard> [--no-build] [--seconds n] [--rounds n]`:
// where a feature's CPU per call goes, as the difference between two streaming calls the proxy
// serves side by side (an `a2a` agent against an `http` agent on the same upstream and body; 20
// CEL rules against no policy; the answer guard's 4 KiB answer against a policy without answer rules). The proxy runs with `steps-probe.cjs`; each round measures both
// variants without a profiler, then under the V8 CPU profiler, order alternating. Printed: the
// unprofiled CPU per call of each, and the profiled µs per call by step and by leaf frame, largest
// differences first (docs/performance.md, "Per-step costs").
import { fileURLToPath } from "node:url";
import { A2A_BODIES, a2aAgents } from "./a2a.ts";
import { build, deploy, SMALL_PATHS, storesOrExplain } from "./deploy.ts";
import { GUARD_CALL, tenantWith } from "./guard.ts";
import { type LoadSpec, load } from "./load.ts";
import { policyTenants } from "./policy.ts";
import { probeWindow, runMain } from "./probe.ts";
import { cpuMsOf, quiet } from "./procs.ts";
import { median } from "./stats.ts";

const argv = process.argv.slice(2);
const num = (flag: string, dflt: number) => {
  const at = argv.indexOf(flag);
  return at >= 0 ? Number(argv[at + 1]) : dflt;
};
const FEATURE = argv[0] ?? "a2a-send";
const SECONDS = num("--seconds", 5);
const ROUNDS = num("--rounds", 3);
const PROBE = fileURLToPath(new URL("steps-probe.cjs", import.meta.url));

type Cpu = { total: number; byStep: Record<string, number>; byFrame: Record<string, number> };
type Sums = { calls: number; byStep: Record<string, number>; byFrame: Record<string, number> };

function addInto(into: Record<string, number>, from: Record<string, number>) {
  for (const [k, v] of Object.entries(from)) into[k] = (into[k] ?? 0) + v;
}

/** Rows whose per-call difference (feature − base) is largest, both directions. */
function diff(title: string, base: Sums, feature: Sums, min: number) {
  console.log(`\n${title} (µs per call, profiled: base, feature, difference)`);
  const keys = new Set([...Object.keys(base.byStep), ...Object.keys(feature.byStep)]);
  const of = (s: Sums, which: "byStep" | "byFrame", k: string) => (s[which][k] ?? 0) / s.calls;
  const which = title.startsWith("by step") ? "byStep" : "byFrame";
  if (which === "byFrame") {
    keys.clear();
    for (const k of [...Object.keys(base.byFrame), ...Object.keys(feature.byFrame)]) keys.add(k);
  }
  const rows = [...keys]
    .map((k) => [k, of(base, which, k), of(feature, which, k)] as const)
    .sort((a, b) => Math.abs(b[2] - b[1]) - Math.abs(a[2] - a[1]));
  for (const [k, b, f] of rows) {
    if (Math.abs(f - b) < min) continue;
    console.log(
      `  ${b.toFixed(2).padStart(8)} ${f.toFixed(2).padStart(8)} ${(f - b >= 0 ? "+" : "") + (f - b).toFixed(2)}  ${k}`,
    );
  }
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
  const specs: Record<"base" | "feature", (seconds: number) => LoadSpec> = await (async () => {
    const common = { connections: 64, "content-type": "application/json" };
    if (FEATURE === "guard") {
      // The answer guard's 4 KiB tools/call: a policy without answer rules against the bench's rule.
      const t = { unguarded: await tenantWith(d, "unguarded"), guarded: await tenantWith(d, "guarded") };
      const of = (v: "unguarded" | "guarded") => (seconds: number) => ({
        url: `${d.proxy}/v1/proxy/${t[v].agentId}/stream`,
        headers: {
          authorization: `Bearer ${t[v].token}`,
          "content-type": common["content-type"],
          accept: "application/json, text/event-stream",
        },
        body: GUARD_CALL,
        connections: common.connections,
        seconds,
      });
      return { base: of("unguarded"), feature: of("guarded") };
    }
    if (FEATURE === "policy") {
      const t = await policyTenants(d, "/echo");
      const of = (v: "none" | "cel") => (seconds: number) => ({
        url: `${d.proxy}/v1/proxy/${t[v].agentId}/stream`,
        headers: { authorization: `Bearer ${t[v].token}`, "content-type": common["content-type"] },
        body: JSON.stringify({ prompt: "hello", n: 1 }),
        connections: common.connections,
        seconds,
      });
      return { base: of("none"), feature: of("cel") };
    }
    const { token, ...agents } = await a2aAgents(d);
    const body = FEATURE === "a2a-stream" ? A2A_BODIES.stream : A2A_BODIES.send;
    const of = (k: "http" | "a2a") => (seconds: number) => ({
      url: `${d.proxy}/v1/proxy/${agents[k]}/stream`,
      headers: {
        authorization: `Bearer ${token}`,
        "content-type": common["content-type"],
        "a2a-version": "1.0",
      },
      body,
      connections: common.connections,
      seconds,
    });
    return { base: of("http"), feature: of("a2a") };
  })();
  const pid = d.proxyProc.pid as number;
  const variants = ["base", "feature"] as const;
  for (const v of variants) await load(specs[v](2)); // warm-up: JIT, pools, caches
  const plain: Record<(typeof variants)[number], number[]> = { base: [], feature: [] };
  const sums: Record<(typeof variants)[number], Sums> = {
    base: { calls: 0, byStep: {}, byFrame: {} },
    feature: { calls: 0, byStep: {}, byFrame: {} },
  };
  for (let r = 0; r < ROUNDS; r++) {
    for (let i = 0; i < 2; i++) {
      const v = variants[(i + r) % 2] as (typeof variants)[number];
      await quiet();
      const before = cpuMsOf(pid);
      const res = await load(specs[v](SECONDS));
      if (res.errors > 0) throw new Error(`${v}: ${res.errors} failed requests`);
      plain[v].push(((cpuMsOf(pid) - before) * 1000) / res.requests);
      const cpu = await probeWindow<Cpu>(d.proxyProc, "gw-steps", "alloc", false, async () => {
        const p = await load(specs[v](SECONDS));
        if (p.errors > 0) throw new Error(`${v}: ${p.errors} failed requests`);
        return p.requests;
      });
      sums[v].calls += cpu.calls;
      addInto(sums[v].byStep, cpu.byStep);
      addInto(sums[v].byFrame, cpu.byFrame);
    }
  }
  const b = median(plain.base);
  const f = median(plain.feature);
  console.log(
    `${FEATURE}: proxy CPU per call c=64, no profiler, medians of ${ROUNDS}: base ${b.toFixed(1)} µs [${plain.base.map((x) => x.toFixed(0)).join(", ")}], feature ${f.toFixed(1)} µs [${plain.feature.map((x) => x.toFixed(0)).join(", ")}]: ${f - b >= 0 ? "+" : ""}${(f - b).toFixed(1)} µs`,
  );
  diff("by step", sums.base, sums.feature, 0.3);
  diff("by leaf frame", sums.base, sums.feature, 0.4);
  return 0;
}

runMain(main);
