// `pnpm bench:ab --base <worktree> [--only send,stream,policy] [--rounds n] [--seconds n]`: the feature rows of two builds side
// by side, this tree's and another worktree's (its own `pnpm build`), each a deployment of its
// own running at the same time, load windows alternating between them (order changing by round).
// On a loaded machine the two builds then see the same noise; each round gives each build's
// feature − baseline, and the medians of those are compared (docs/performance.md, "A2A agents",
// "Policy conditions read without CEL"). Rows: an A2A SendMessage and a streamed task beside an
// http agent, 20 CEL rules beside no policy.
import { resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { A2A_BODIES, a2aAgents } from "./a2a.ts";
import { type Deployment, deploy, SMALL_PATHS, storesOrExplain } from "./deploy.ts";
import { type LoadSpec, load } from "./load.ts";
import { policyTenants } from "./policy.ts";
import { runMain } from "./probe.ts";
import { cpuMsOf } from "./procs.ts";
import { median } from "./stats.ts";

const argv = process.argv.slice(2);
const arg = (flag: string) => {
  const at = argv.indexOf(flag);
  return at >= 0 ? argv[at + 1] : undefined;
};
const ROUNDS = Number(arg("--rounds") ?? 6);
const SECONDS = Number(arg("--seconds") ?? 4);
const ONLY = (arg("--only") ?? "send,stream,policy").split(",");
type Pair = { base: LoadSpec; feature: LoadSpec };

async function pairsOf(d: Deployment): Promise<Record<"send" | "stream" | "policy", Pair>> {
  const { token, ...a } = await a2aAgents(d);
  const t = await policyTenants(d, "/echo");
  const a2a = (k: "http" | "a2a", body: string): LoadSpec => ({
    url: `${d.proxy}/v1/proxy/${a[k]}/stream`,
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json", "a2a-version": "1.0" },
    body,
    connections: 64,
    seconds: SECONDS,
  });
  const policy = (v: "none" | "cel"): LoadSpec => ({
    url: `${d.proxy}/v1/proxy/${t[v].agentId}/stream`,
    headers: { authorization: `Bearer ${t[v].token}`, "content-type": "application/json" },
    body: JSON.stringify({ prompt: "hello", n: 1 }),
    connections: 64,
    seconds: SECONDS,
  });
  return {
    send: { base: a2a("http", A2A_BODIES.send), feature: a2a("a2a", A2A_BODIES.send) },
    stream: { base: a2a("http", A2A_BODIES.stream), feature: a2a("a2a", A2A_BODIES.stream) },
    policy: { base: policy("none"), feature: policy("cel") },
  };
}

async function main(): Promise<number> {
  const baseTree = arg("--base");
  if (!baseTree) {
    console.log("usage: pnpm bench:ab --base <worktree, built> [--rounds n] [--seconds n]");
    return 1;
  }
  const stores = await storesOrExplain();
  if (!stores) return 1;
  // The other tree's own deploy (and process list): its services run from its own bundles.
  const other = await import(pathToFileURL(resolve(baseTree, "bench/src/deploy.ts")).href);
  const otherProcs = await import(pathToFileURL(resolve(baseTree, "bench/src/procs.ts")).href);
  try {
    const trees = {
      base: (await other.deploy({ ...stores, paths: SMALL_PATHS })) as Deployment,
      this: await deploy({ ...stores, paths: SMALL_PATHS }),
    };
    const pairs = { base: await pairsOf(trees.base), this: await pairsOf(trees.this) };
    for (const scenario of ["send", "stream", "policy"] as const) {
      if (!ONLY.includes(scenario)) continue;
      const perCall: Record<string, number[]> = {};
      const added: Record<keyof typeof trees, number[]> = { base: [], this: [] };
      for (const tree of ["base", "this"] as const)
        for (const v of ["base", "feature"] as const) await load({ ...pairs[tree][scenario][v], seconds: 2 });
      for (let r = 0; r < ROUNDS; r++) {
        for (const tree of r % 2 ? (["this", "base"] as const) : (["base", "this"] as const)) {
          const got = { base: 0, feature: 0 };
          for (const v of (r >> 1) % 2 ? (["feature", "base"] as const) : (["base", "feature"] as const)) {
            const pid = trees[tree].proxyProc.pid as number;
            const before = cpuMsOf(pid);
            const res = await load(pairs[tree][scenario][v]);
            if (res.errors > 0) throw new Error(`${scenario} ${tree} ${v}: ${res.errors} failed requests`);
            got[v] = ((cpuMsOf(pid) - before) * 1000) / res.requests;
            const key = `${tree} ${v}`;
            perCall[key] = [...(perCall[key] ?? []), got[v]];
          }
          added[tree].push(got.feature - got.base);
        }
      }
      const list = (xs: number[]) => xs.map((x) => x.toFixed(0)).join(", ");
      console.log(`\n${scenario} (proxy CPU per call c=64, µs):`);
      for (const [k, xs] of Object.entries(perCall))
        console.log(`  ${k.padEnd(14)} median ${median(xs).toFixed(1)}  [${list(xs)}]`);
      for (const tree of ["base", "this"] as const)
        console.log(
          `  ${tree}: feature − baseline, median of the rounds ${median(added[tree]).toFixed(1)} [${list(added[tree])}]`,
        );
    }
    return 0;
  } finally {
    await otherProcs.stopAll();
  }
}

runMain(main);
