import { readFileSync } from "node:fs";

/**
 * What a process kept between two heap snapshots of it (`pnpm test:soak` with GW_SOAK_SNAPSHOTS,
 * or any two `.heapsnapshot` files of one process):
 *
 *   node --max-old-space-size=4096 --import tsx test/faults/heap-diff.ts before.heapsnapshot after.heapsnapshot [rows]
 *
 * Prints the object kinds (type and constructor or function name) whose count grew most, then,
 * for the objects of `after` that did not exist in `before` (V8 keeps an object's snapshot id
 * across snapshots of one process), what holds them: the kind of each new object's first strong
 * retainer and the edge's name, by count. A structure that grows with every call shows up as
 * many new objects under one retainer, e.g. `Map (internal array) --[123]-->`.
 */

type Snapshot = {
  count: number;
  fields: number;
  nodes: number[];
  edges: number[];
  strings: string[];
  nodeTypes: string[];
  edgeTypes: string[];
  edgeFields: number;
  firstEdge: Uint32Array;
};

function load(path: string): Snapshot {
  const raw = JSON.parse(readFileSync(path, "utf8")) as {
    snapshot: {
      meta: { node_fields: string[]; node_types: [string[]]; edge_fields: string[]; edge_types: [string[]] };
      node_count: number;
    };
    nodes: number[];
    edges: number[];
    strings: string[];
  };
  const meta = raw.snapshot.meta;
  const fields = meta.node_fields.length;
  const count = raw.snapshot.node_count;
  const firstEdge = new Uint32Array(count + 1);
  const edgeCountAt = meta.node_fields.indexOf("edge_count");
  for (let i = 0, e = 0; i < count; i++) {
    firstEdge[i] = e;
    e += (raw.nodes[i * fields + edgeCountAt] as number) * meta.edge_fields.length;
    firstEdge[i + 1] = e;
  }
  return {
    count,
    fields,
    nodes: raw.nodes,
    edges: raw.edges,
    strings: raw.strings,
    nodeTypes: meta.node_types[0],
    edgeTypes: meta.edge_types[0],
    edgeFields: meta.edge_fields.length,
    firstEdge,
  };
}

// Node fields: type, name, id, self_size, edge_count, ...; edge fields: type, name_or_index, to_node.
const kindOf = (s: Snapshot, i: number): string => {
  const type = s.nodeTypes[s.nodes[i * s.fields] as number] ?? "?";
  const name = s.strings[s.nodes[i * s.fields + 1] as number] ?? "";
  if (type === "string" || type === "concatenated string" || type === "sliced string") return "(string)";
  if (type === "number") return "(number)";
  return `${type} ${name.length > 60 ? `${name.slice(0, 60)}…` : name}`;
};
const idOf = (s: Snapshot, i: number) => s.nodes[i * s.fields + 2] as number;
const sizeOf = (s: Snapshot, i: number) => s.nodes[i * s.fields + 3] as number;

function tally(s: Snapshot): Map<string, { count: number; size: number }> {
  const out = new Map<string, { count: number; size: number }>();
  for (let i = 0; i < s.count; i++) {
    const k = kindOf(s, i);
    const t = out.get(k) ?? { count: 0, size: 0 };
    t.count++;
    t.size += sizeOf(s, i);
    out.set(k, t);
  }
  return out;
}

/** For every node, the first strong retainer (node index) and the edge name, -1 if none. */
function retainers(s: Snapshot): { by: Int32Array; edge: string[] } {
  const by = new Int32Array(s.count).fill(-1);
  const edge: string[] = new Array(s.count);
  for (let from = 0; from < s.count; from++) {
    for (let e = s.firstEdge[from] as number; e < (s.firstEdge[from + 1] as number); e += s.edgeFields) {
      const type = s.edgeTypes[s.edges[e] as number];
      if (type === "weak" || type === "shortcut") continue;
      const to = (s.edges[e + 2] as number) / s.fields;
      if (by[to] !== -1) continue;
      by[to] = from;
      const n = s.edges[e + 1] as number;
      edge[to] =
        type === "element" || type === "hidden"
          ? `[${n}]`
          : type === "internal"
            ? `(${s.strings[n]})`
            : String(s.strings[n]);
    }
  }
  return { by, edge };
}

const [beforePath, afterPath, rowsArg] = process.argv.slice(2);
if (!beforePath || !afterPath) {
  console.error("usage: heap-diff.ts before.heapsnapshot after.heapsnapshot [rows]");
  process.exit(2);
}
const rows = Number(rowsArg ?? 25);
const before = load(beforePath);
const after = load(afterPath);
const tb = tally(before);
const ta = tally(after);

console.log(`nodes: ${before.count} → ${after.count}\n\nkinds whose count grew most:`);
const grown = [...ta]
  .map(([k, a]) => {
    const b = tb.get(k) ?? { count: 0, size: 0 };
    return { kind: k, before: b.count, after: a.count, delta: a.count - b.count, bytes: a.size - b.size };
  })
  .sort((x, y) => y.delta - x.delta)
  .slice(0, rows);
console.table(grown);

const seen = new Set<number>();
for (let i = 0; i < before.count; i++) seen.add(idOf(before, i));
const { by, edge } = retainers(after);
const held = new Map<string, { count: number; size: number }>();
// Native and synthetic nodes (the embedder's objects, GC roots) get new ids in every snapshot: not counted as new.
const jsOnly = (i: number) => {
  const type = after.nodeTypes[after.nodes[i * after.fields] as number];
  return type !== "native" && type !== "synthetic" && type !== "hidden";
};
for (let i = 0; i < after.count; i++) {
  if (!jsOnly(i) || seen.has(idOf(after, i))) continue;
  const r = by[i] as number;
  // The retainer of a new object that is itself new is followed up to the first old one: that is the structure that grows.
  let holder = r;
  let via = edge[i] ?? "";
  let hops = 0;
  while (holder !== -1 && !seen.has(idOf(after, holder)) && hops < 8) {
    via = edge[holder] ?? "";
    holder = by[holder] as number;
    hops++;
  }
  const key = holder === -1 ? "(no retainer)" : `${kindOf(after, holder)} --${via}--> ${kindOf(after, i)}`;
  const t = held.get(key) ?? { count: 0, size: 0 };
  t.count++;
  t.size += sizeOf(after, i);
  held.set(key, t);
}
if (held.size === 0) {
  console.log(
    "\nno object of the second snapshot is new by its id: V8 numbered the objects afresh (snapshots of different inspector sessions, or its object map was reset); compare the counts above",
  );
  process.exit(0);
}
console.log("\nnew objects of the second snapshot, by the old object that holds them (through new ones):");
console.table(
  [...held]
    .map(([k, t]) => ({ holder: k.length > 140 ? `${k.slice(0, 140)}…` : k, count: t.count, bytes: t.size }))
    .sort((x, y) => y.count - x.count)
    .slice(0, rows),
);
