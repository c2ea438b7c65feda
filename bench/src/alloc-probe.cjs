// Preloaded into a process under measurement (`node --require alloc-probe.cjs ...`): the first
// SIGUSR2 starts counting, the second writes /tmp/gw-alloc-<pid>.json: the bytes the heap
// allocated in between (each GC's heap before it minus the heap after the one before: exact, not
// sampled), the GCs and their cost. When /tmp/gw-alloc-<pid>.sample exists at the start, the
// window also samples (the V8 sampling heap profiler, collected objects included: slow): an
// estimate of the objects allocated, and the functions that allocated most.
const v8 = require("node:v8");
const { existsSync, readFileSync, renameSync, writeFileSync } = require("node:fs");
const { Session } = require("node:inspector");

const INTERVAL = 256; // bytes between samples: fine enough to count small objects
let run = null;

process.on("SIGUSR2", () => {
  if (run === null) {
    let session = null;
    const flag = `/tmp/gw-alloc-${process.pid}.sample`;
    if (existsSync(flag)) {
      // "survivors" in the flag file: only objects that outlived the young generation (promoted,
      // or alive at the end): who makes the old generation grow.
      const survivors = readFileSync(flag, "utf8").includes("survivors");
      session = new Session();
      session.connect();
      session.post("HeapProfiler.startSampling", {
        samplingInterval: INTERVAL,
        includeObjectsCollectedByMajorGC: true,
        includeObjectsCollectedByMinorGC: !survivors,
      });
    }
    const gc = new v8.GCProfiler();
    gc.start();
    run = { session, gc, used: v8.getHeapStatistics().used_heap_size };
    return;
  }
  const { session, gc, used } = run;
  run = null;
  const stats = gc.stop().statistics;
  const end = v8.getHeapStatistics().used_heap_size;
  let allocated = 0;
  let after = used;
  let gcCost = 0;
  const gcs = {};
  // What each scavenge kept: the bytes it copied (new space left after it) and those it promoted
  // to the old generation (old space grown over it). Their cost, unlike the GC's wall time, does
  // not depend on how loaded the machine is.
  let survived = 0;
  let promoted = 0;
  const space = (h, name) => h.heapSpaceStatistics.find((x) => x.spaceName === name)?.spaceUsedSize ?? 0;
  for (const s of stats) {
    if (s.gcType === "Scavenge") {
      survived += space(s.afterGC, "new_space");
      promoted += Math.max(0, space(s.afterGC, "old_space") - space(s.beforeGC, "old_space"));
    }
    allocated += s.beforeGC.heapStatistics.usedHeapSize - after;
    after = s.afterGC.heapStatistics.usedHeapSize;
    gcCost += s.cost;
    gcs[s.gcType] = (gcs[s.gcType] ?? 0) + 1;
  }
  allocated += end - after;
  const out = { allocated, gcs, gcCost, survived, promoted };
  const file = `/tmp/gw-alloc-${process.pid}.json`;
  // Written aside, then renamed: the bench reads the file as soon as it exists.
  const write = (o) => {
    writeFileSync(`${file}.part`, JSON.stringify(o));
    renameSync(`${file}.part`, file);
  };
  if (session === null) return write(out);
  session.post("HeapProfiler.stopSampling", (err, res) => {
    session.disconnect();
    write({ ...out, ...(err ? {} : sampled(res.profile)) });
  });
});

/** Objects and bytes estimated from the samples, and the allocating functions (self) by bytes. */
function sampled(profile) {
  const frame = new Map();
  const walk = (n) => {
    const f = n.callFrame;
    const url = f.url
      .replace(/^.*node_modules\/\.pnpm\/[^/]+\/node_modules\//, "")
      .replace(/^.*\/(services|packages)\//, "$1/");
    frame.set(n.id, `${f.functionName || "(anonymous)"} ${url}:${f.lineNumber + 1}`);
    for (const c of n.children) walk(c);
  };
  walk(profile.head);
  let objects = 0;
  let bytes = 0;
  const sites = new Map();
  for (const s of profile.samples) {
    // A sample of an object of `size` bytes stands for 1/p such objects, p its chance to be sampled.
    const n = 1 / (1 - Math.exp(-s.size / INTERVAL));
    objects += n;
    bytes += n * s.size;
    const k = frame.get(s.nodeId) ?? "?";
    const site = sites.get(k) ?? { objects: 0, bytes: 0 };
    site.objects += n;
    site.bytes += n * s.size;
    sites.set(k, site);
  }
  const top = [...sites].sort((a, b) => b[1].bytes - a[1].bytes).slice(0, 40);
  return { sampledObjects: objects, sampledBytes: bytes, top };
}
