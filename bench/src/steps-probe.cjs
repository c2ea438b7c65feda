// Preloaded into the proxy under measurement (`node --require steps-probe.cjs ...`, `steps.ts`):
// the first SIGUSR2 starts the V8 CPU profiler, or (when /tmp/gw-steps-<pid>.alloc exists) the
// sampling heap profiler with collected objects included; the second stops it and writes
// /tmp/gw-steps-<pid>.json: the samples' weight (µs of CPU, or bytes allocated) per pipeline step
// (the innermost frame of our code on the stack: what a step calls counts to it) and per package
// or library (the leaf frame: who burnt it). See docs/performance.md, "Per-step costs".
const { existsSync, renameSync, writeFileSync } = require("node:fs");
const { Session } = require("node:inspector");
const { findSourceMap } = require("node:module");

const HEAP_INTERVAL = 512;
let run = null;

/** Our code, by room: the innermost frame that matches names the step a sample belongs to. */
const STEPS = [
  [/services\/proxy\/src\/steps\/([a-z-]+)\.ts/, (m) => `step ${m[1]}`],
  [/services\/proxy\/src\/pipeline\.ts/, () => "pipeline (glue)"],
  [/services\/proxy\/src\/routes\/stream\.ts/, () => "route stream"],
  [/services\/proxy\/src\/(direct|app)\.ts/, () => "router + authentication"],
  [/services\/proxy\/src\/(tracker|agent-cache)\.ts/, (m) => `proxy ${m[1]}`],
  [/packages\/forward\/src\/answer\//, () => "forward: answer hooks"],
  [/packages\/forward\/src\/(relay|sink|tap|capture)\.ts/, () => "forward: relay"],
  [/packages\/forward\/src\/(dial|target|credential)\.ts/, () => "forward: dial"],
  [/packages\/forward\/src\/protocols\//, () => "forward: protocol module"],
  [/packages\/forward\/src\//, () => "forward: other"],
  [/packages\/invocations\/src\//, () => "record write"],
  [/packages\/([a-z0-9-]+)\/src\//, (m) => `package ${m[1]}`],
  [/services\/proxy\/src\//, () => "proxy: other"],
];

/** Who burnt it: the leaf frame's library or package. */
function owner(url, name) {
  if (!url) return name.startsWith("(") ? name : "(native / V8)";
  const lib = url.match(/node_modules\/\.pnpm\/[^/]+\/node_modules\/((?:@[^/]+\/)?[^/]+)/);
  if (lib) return lib[1];
  const ours = url.match(/\/(services|packages)\/([a-z0-9-]+)\//);
  if (ours) return `${ours[1]}/${ours[2]}`;
  if (url.startsWith("node:")) return `node: ${url.slice(5).split("/")[0]}`;
  return "(other)";
}

function stepOf(stack) {
  for (const url of stack) {
    for (const [re, name] of STEPS) {
      const m = url.match(re);
      if (m) return name(m);
    }
  }
  return "(outside our code: node, sockets, GC)";
}

/**
 * The source file of a frame: the services run from bundles (`dist/main.js`), so a frame of the
 * bundle is looked up in its source map (the proxy runs with --enable-source-maps).
 */
const maps = new Map();
const where = new Map();
function sourceOf(f) {
  const url = f.url;
  if (!url.endsWith(".js") || url.includes("node_modules")) return url;
  const key = `${url}:${f.lineNumber}:${f.columnNumber}`;
  let out = where.get(key);
  if (out !== undefined) return out;
  let map = maps.get(url);
  if (map === undefined) {
    try {
      map = findSourceMap(url.startsWith("file://") ? url.slice(7) : url) ?? null;
    } catch {
      map = null;
    }
    maps.set(url, map);
  }
  const entry = map?.findEntry(f.lineNumber, f.columnNumber);
  out = entry?.originalSource ?? url;
  where.set(key, out);
  return out;
}

/** Per node id: its stack of urls, leaf first. */
function stacks(nodes, childrenOf) {
  const parent = new Map();
  for (const n of nodes) for (const c of childrenOf(n)) parent.set(c, n.id);
  const byId = new Map(nodes.map((n) => [n.id, n]));
  const memo = new Map();
  const stackOf = (id) => {
    if (memo.has(id)) return memo.get(id);
    const out = [];
    for (let at = id; at !== undefined; at = parent.get(at)) out.push(sourceOf(byId.get(at).callFrame));
    memo.set(id, out);
    return out;
  };
  return { byId, stackOf };
}

/** A leaf frame by function: its name and where it is (file and line, our sources by their map). */
function fnOf(f) {
  const src = sourceOf(f)
    .replace(/^.*node_modules\/\.pnpm\/[^/]+\/node_modules\//, "")
    .replace(/^.*\/(services|packages)\//, "$1/");
  return `${f.functionName || "(anonymous)"} ${src}:${f.lineNumber + 1}`;
}

/** A frame's file, short: from `packages/`, `services/` or a library's name on. */
function frameFile(url) {
  if (!url) return "";
  const lib = url.match(/node_modules\/\.pnpm\/[^/]+\/node_modules\/(.*)$/);
  if (lib) return lib[1];
  const ours = url.match(/\/((?:services|packages|bench)\/.*)$/);
  return ours ? ours[1] : url;
}

function add(map, k, v) {
  map[k] = (map[k] ?? 0) + v;
}

process.on("SIGUSR2", () => {
  const pid = process.pid;
  if (run === null) {
    const session = new Session();
    session.connect();
    const alloc = existsSync(`/tmp/gw-steps-${pid}.alloc`);
    if (alloc)
      session.post("HeapProfiler.startSampling", {
        samplingInterval: HEAP_INTERVAL,
        includeObjectsCollectedByMajorGC: true,
        includeObjectsCollectedByMinorGC: true,
      });
    else {
      session.post("Profiler.enable");
      session.post("Profiler.setSamplingInterval", { interval: 100 });
      session.post("Profiler.start");
    }
    run = { session, alloc };
    return;
  }
  const { session, alloc } = run;
  run = null;
  const done = (out) => {
    session.disconnect();
    // Written aside, then renamed: the bench reads the file as soon as it exists.
    writeFileSync(`/tmp/gw-steps-${pid}.json.part`, JSON.stringify(out));
    renameSync(`/tmp/gw-steps-${pid}.json.part`, `/tmp/gw-steps-${pid}.json`);
  };
  if (alloc)
    return session.post("HeapProfiler.stopSampling", (err, res) => {
      if (err) return done({ error: String(err) });
      const nodes = [];
      const walk = (n) => {
        nodes.push(n);
        for (const c of n.children) walk(c);
      };
      walk(res.profile.head);
      const { byId, stackOf } = stacks(nodes, (n) => n.children.map((c) => c.id));
      const byStep = {};
      const byOwner = {};
      const byFunction = {};
      let total = 0;
      for (const s of res.profile.samples) {
        const bytes = s.size / (1 - Math.exp(-s.size / HEAP_INTERVAL));
        const f = byId.get(s.nodeId)?.callFrame ?? { url: "", functionName: "?" };
        add(byStep, stepOf(stackOf(s.nodeId)), bytes);
        add(byOwner, owner(sourceOf(f), f.functionName), bytes);
        add(byFunction, fnOf(f), bytes);
        total += bytes;
      }
      done({ kind: "alloc", total, byStep, byOwner, byFunction });
    });
  session.post("Profiler.stop", (err, res) => {
    if (err) return done({ error: String(err) });
    const p = res.profile;
    const { byId, stackOf } = stacks(p.nodes, (n) => n.children ?? []);
    const byStep = {};
    const byOwner = {};
    const byFunction = {};
    const byFrame = {};
    let total = 0;
    p.samples.forEach((id, i) => {
      const f = byId.get(id)?.callFrame ?? { url: "", functionName: "?" };
      if (f.functionName === "(idle)") return;
      const us = p.timeDeltas[i] ?? 0;
      add(byStep, stepOf(stackOf(id)), us);
      add(byOwner, owner(sourceOf(f), f.functionName), us);
      add(byFunction, fnOf(f), us);
      // The leaf frame itself (self time): what a comparison of two calls names.
      add(byFrame, `${f.functionName || "(anonymous)"} ${frameFile(sourceOf(f))}`, us);
      total += us;
    });
    done({ kind: "cpu", total, byStep, byOwner, byFunction, byFrame });
  });
});
