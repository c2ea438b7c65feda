// `tsx bench/src/profile-by-window.ts <proxy.cpuprofile> <windows.json> [top] [label label]`: a V8 CPU profile split
// by labelled spans of the monotonic clock (a bench's rounds: `[{label, from, to}]` in µs, as
// `x402-mcp.ts` writes them with `--profile`). Per label the sampled busy time; then the frames whose
// time differs most between two labels (the first two, unless named), self and inclusive (any frame of it on the
// stack) and by npm package, in ms over all of each label's spans.
import { readFileSync } from "node:fs";

type Node = {
  id: number;
  children?: number[];
  callFrame: { functionName: string; url: string; lineNumber: number };
};
type Profile = { nodes: Node[]; samples: number[]; timeDeltas: number[]; startTime: number };
type Span = { label: string; from: number; to: number };

const [file, spansFile, topArg, labelA, labelB] = process.argv.slice(2);
if (!file || !spansFile) throw new Error("usage: profile-by-window.ts <.cpuprofile> <windows.json> [top]");
const top = Number(topArg ?? "30");
const p = JSON.parse(readFileSync(file, "utf8")) as Profile;
const spans = JSON.parse(readFileSync(spansFile, "utf8")) as Span[];
const labels = [...new Set(spans.map((s) => s.label))];

const byId = new Map(p.nodes.map((n) => [n.id, n]));
const parent = new Map<number, number>();
for (const n of p.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
const keyOf = (n: Node) => {
  const url = n.callFrame.url
    .replace(/^file:\/\/.*node_modules\/\.pnpm\/[^/]+\/node_modules\//, "")
    .replace(/^file:\/\/.*\/(services|packages)\//, "$1/");
  return `${n.callFrame.functionName || "(anonymous)"}  ${url}:${n.callFrame.lineNumber + 1}`;
};
const IDLE = new Set(["(idle)", "(program)"]);

// Per label: self and inclusive time by frame key, and the busy total (idle excluded).
const self = new Map<string, Map<string, number>>(labels.map((l) => [l, new Map()]));
const incl = new Map<string, Map<string, number>>(labels.map((l) => [l, new Map()]));
const inPackage = new Map<string, Map<string, number>>(labels.map((l) => [l, new Map()]));
// Self time by where the frame's code is (adds up to the busy time): an npm package, the gateway's
// bundle, Node's own JavaScript, native code (syscalls), the garbage collector.
const byOrigin = new Map<string, Map<string, number>>(labels.map((l) => [l, new Map()]));
const originOf = (n: Node) => {
  const url = n.callFrame.url;
  if (n.callFrame.functionName === "(garbage collector)") return "(garbage collector)";
  if (url.startsWith("node:")) return "node's JavaScript";
  if (url === "") return "native (syscalls, V8 builtins)";
  return packageOf(n) ?? (/\/(services|packages)\//.test(url) ? "the gateway's code" : url);
};
const packageOf = (n: Node) =>
  /node_modules\/\.pnpm\/[^/]+\/node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(n.callFrame.url)?.[1];
const busy = new Map<string, number>(labels.map((l) => [l, 0]));
const add = (m: Map<string, number>, k: string, us: number) => m.set(k, (m.get(k) ?? 0) + us);
let t = p.startTime;
p.samples.forEach((id, i) => {
  t += p.timeDeltas[i] ?? 0;
  const dt = p.timeDeltas[i + 1] ?? 0;
  const span = spans.find((s) => t >= s.from && t < s.to);
  const n = byId.get(id);
  if (!span || !n || IDLE.has(n.callFrame.functionName)) return;
  add(busy, span.label, dt);
  add(self.get(span.label) as Map<string, number>, keyOf(n), dt);
  add(byOrigin.get(span.label) as Map<string, number>, originOf(n), dt);
  const seen = new Set<string>();
  for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) {
    const frame = byId.get(at) as Node;
    const k = keyOf(frame);
    if (!seen.has(k)) add(incl.get(span.label) as Map<string, number>, k, dt);
    seen.add(k);
    const pkg = packageOf(frame);
    if (pkg && !seen.has(pkg)) add(inPackage.get(span.label) as Map<string, number>, pkg, dt);
    if (pkg) seen.add(pkg);
  }
});

const ms = (us: number) => (us / 1000).toFixed(0).padStart(7);
for (const l of labels) console.log(`${l}: ${ms(busy.get(l) ?? 0)} ms busy sampled`);
const [a, b] = labelA && labelB ? [labelA, labelB] : labels;
if (!a || !b) process.exit(0);
for (const [name, m] of [
  ["self", self],
  ["inclusive", incl],
  ["inside each npm package (inclusive)", inPackage],
  ["self, by origin", byOrigin],
] as const) {
  const ma = m.get(a) as Map<string, number>;
  const mb = m.get(b) as Map<string, number>;
  const keys = new Set([...ma.keys(), ...mb.keys()]);
  const diff = [...keys].map((k) => [k, (mb.get(k) ?? 0) - (ma.get(k) ?? 0)] as const);
  console.log(`\n${name}: ${b} − ${a} (ms), then ${a} / ${b}`);
  for (const [k, d] of diff.sort((x, y) => Math.abs(y[1]) - Math.abs(x[1])).slice(0, top))
    console.log(`${ms(d)}  ${ms(ma.get(k) ?? 0)} ${ms(mb.get(k) ?? 0)}  ${k}`);
}
