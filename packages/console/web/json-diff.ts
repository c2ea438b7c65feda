// What changed between two JSON values, as the paths that differ: the audit screen shows a
// replaced policy or an updated agent this way instead of two whole documents.

/** One difference: at `path` (`rules[1].match.tools[0]`), a value added, removed or changed. */
export type JsonChange =
  | { kind: "added"; path: string; to: unknown }
  | { kind: "removed"; path: string; from: unknown }
  | { kind: "changed"; path: string; from: unknown; to: unknown };

/** Arrays longer than this (product of both lengths) are compared index by index, not aligned. */
const MAX_ALIGN = 250_000;

/**
 * The differences between `from` and `to`, depth first, each path under `path`. Objects are
 * compared key by key; arrays are aligned on their equal elements first, so a rule inserted at
 * the top is one `added` rather than every rule below it `changed`; an element replaced in place
 * is compared inside. A value of another type (or null) replaces the old one whole.
 */
export function jsonDiff(from: unknown, to: unknown, path = ""): JsonChange[] {
  if (same(from, to)) return [];
  if (isObject(from) && isObject(to)) return objectDiff(from, to, path);
  if (Array.isArray(from) && Array.isArray(to)) return arrayDiff(from, to, path);
  if (from === null || from === undefined) return [{ kind: "added", path, to }];
  if (to === null || to === undefined) return [{ kind: "removed", path, from }];
  return [{ kind: "changed", path, from, to }];
}

function objectDiff(from: Record<string, unknown>, to: Record<string, unknown>, path: string): JsonChange[] {
  const out: JsonChange[] = [];
  const keys = [...Object.keys(from), ...Object.keys(to).filter((k) => !Object.hasOwn(from, k))];
  for (const key of keys) {
    const at = keyPath(path, key);
    if (!Object.hasOwn(to, key)) out.push({ kind: "removed", path: at, from: from[key] });
    else if (!Object.hasOwn(from, key)) out.push({ kind: "added", path: at, to: to[key] });
    else out.push(...jsonDiff(from[key], to[key], at));
  }
  return out;
}

function arrayDiff(from: unknown[], to: unknown[], path: string): JsonChange[] {
  if (from.length * to.length > MAX_ALIGN) return byIndex(from, to, path);
  const out: JsonChange[] = [];
  // Between two kept elements: the old ones gone and the new ones come, paired in order.
  let removed: number[] = [];
  let added: number[] = [];
  const gap = () => {
    const paired = Math.min(removed.length, added.length);
    removed.forEach((i, k) => {
      const j = added[k];
      if (k < paired && j !== undefined) out.push(...jsonDiff(from[i], to[j], `${path}[${j}]`));
      else out.push({ kind: "removed", path: `${path}[${i}]`, from: from[i] });
    });
    for (const j of added.slice(paired)) out.push({ kind: "added", path: `${path}[${j}]`, to: to[j] });
    removed = [];
    added = [];
  };
  for (const [i, j] of align(from.map(canonical), to.map(canonical))) {
    if (j === null) removed.push(i as number);
    else if (i === null) added.push(j);
    else gap();
  }
  gap();
  return out;
}

function byIndex(from: unknown[], to: unknown[], path: string): JsonChange[] {
  const out: JsonChange[] = [];
  for (let k = 0; k < Math.max(from.length, to.length); k++) {
    const at = `${path}[${k}]`;
    if (k >= to.length) out.push({ kind: "removed", path: at, from: from[k] });
    else if (k >= from.length) out.push({ kind: "added", path: at, to: to[k] });
    else out.push(...jsonDiff(from[k], to[k], at));
  }
  return out;
}

/**
 * Two lists of canonical values walked together along a longest common subsequence: `[i, j]` for
 * an element kept, `[i, null]` for one only `a` has, `[null, j]` for one only `b` has.
 */
function align(a: string[], b: string[]): Array<[number | null, number | null]> {
  const w = b.length + 1;
  // lcs(i, j): the length of the longest common subsequence of a[i..] and b[j..].
  const table = new Int32Array((a.length + 1) * w);
  const lcs = (i: number, j: number) => table[i * w + j] ?? 0;
  for (let i = a.length - 1; i >= 0; i--) {
    for (let j = b.length - 1; j >= 0; j--) {
      table[i * w + j] = a[i] === b[j] ? lcs(i + 1, j + 1) + 1 : Math.max(lcs(i + 1, j), lcs(i, j + 1));
    }
  }
  const out: Array<[number | null, number | null]> = [];
  let i = 0;
  let j = 0;
  while (i < a.length && j < b.length) {
    if (a[i] === b[j]) out.push([i++, j++]);
    else if (lcs(i + 1, j) >= lcs(i, j + 1)) out.push([i++, null]);
    else out.push([null, j++]);
  }
  while (i < a.length) out.push([i++, null]);
  while (j < b.length) out.push([null, j++]);
  return out;
}

function same(a: unknown, b: unknown): boolean {
  return canonical(a) === canonical(b);
}

/** JSON with object keys sorted, so that key order never reads as a change. */
function canonical(value: unknown): string {
  return JSON.stringify(value ?? null, (_k, v: unknown) =>
    isObject(v)
      ? Object.fromEntries(
          Object.keys(v)
            .sort()
            .map((k) => [k, v[k]]),
        )
      : v,
  );
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/** `a.b`, or `a["odd key"]` for a key that is not a plain name. */
function keyPath(path: string, key: string): string {
  if (/^[A-Za-z_$][\w$]*$/.test(key)) return path ? `${path}.${key}` : key;
  return `${path}[${JSON.stringify(key)}]`;
}
