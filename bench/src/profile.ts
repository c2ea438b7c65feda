// `tsx bench/src/profile.ts <dir-or-file.cpuprofile> [top]`: the top self-time frames of a V8 CPU
// profile (node --cpu-prof), grouped by function and file, as shares of the sampled time; then the
// share of time spent inside each npm package (any frame of the package on the stack: inclusive).
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";

type Node = {
  id: number;
  children?: number[];
  callFrame: { functionName: string; url: string; lineNumber: number };
  hitCount?: number;
};
type Profile = { nodes: Node[]; samples: number[]; timeDeltas: number[] };

const arg = process.argv[2];
if (!arg) throw new Error("usage: profile.ts <dir or .cpuprofile> [top]");
const top = Number(process.argv[3] ?? "25");
const files = statSync(arg).isDirectory()
  ? readdirSync(arg)
      .filter((f) => f.endsWith(".cpuprofile"))
      .map((f) => join(arg, f))
  : [arg];

for (const file of files) {
  const p = JSON.parse(readFileSync(file, "utf8")) as Profile;
  const byId = new Map(p.nodes.map((n) => [n.id, n]));
  const self = new Map<string, number>();
  let total = 0;
  p.samples.forEach((id, i) => {
    const n = byId.get(id);
    const dt = p.timeDeltas[i] ?? 0;
    if (!n) return;
    const url = n.callFrame.url.replace(/^file:\/\/.*node_modules\/\.pnpm\/[^/]+\/node_modules\//, "");
    const key = `${n.callFrame.functionName || "(anonymous)"}  ${url.replace(/^file:\/\/.*\/(services|packages)\//, "$1/")}:${n.callFrame.lineNumber + 1}`;
    self.set(key, (self.get(key) ?? 0) + dt);
    total += dt;
  });
  console.log(`${file}: ${(total / 1e6).toFixed(1)} s sampled`);
  const line = (k: string, us: number) =>
    console.log(
      `${((100 * us) / total).toFixed(1).padStart(5)}%  ${(us / 1000).toFixed(0).padStart(6)} ms  ${k}`,
    );
  for (const [k, us] of [...self].sort((a, b) => b[1] - a[1]).slice(0, top)) line(k, us);
  console.log("inside each package (inclusive):");
  for (const [k, us] of [...byPackage(p)].sort((a, b) => b[1] - a[1]).slice(0, 12)) line(k, us);
}

/** Sampled time with a frame of the package anywhere on the stack, by npm package. */
function byPackage(p: Profile): Map<string, number> {
  const parent = new Map<number, number>();
  for (const n of p.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const pkg = new Map<number, string | undefined>();
  for (const n of p.nodes)
    pkg.set(
      n.id,
      /node_modules\/\.pnpm\/[^/]+\/node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(n.callFrame.url)?.[1],
    );
  const inside = new Map<string, number>();
  p.samples.forEach((id, i) => {
    const seen = new Set<string>();
    for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) {
      const name = pkg.get(at);
      if (name) seen.add(name);
    }
    for (const name of seen) inside.set(name, (inside.get(name) ?? 0) + (p.timeDeltas[i] ?? 0));
  });
  return inside;
}
