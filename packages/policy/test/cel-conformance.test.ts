import type { Value } from "@bufbuild/cel-spec/cel/expr/value_pb.js";
import { getConformanceSuite, type IncrementalTest } from "@bufbuild/cel-spec/testdata/tests.js";
import { Environment } from "@marcbachmann/cel-js";
import { describe, expect, it } from "vitest";
import knownFailures from "./cel-conformance-known-failures.json" with { type: "json" };

/**
 * The CEL specification's conformance data (as @bufbuild/cel-spec ships it) run against the CEL
 * library policy conditions use, for the parts of the language a condition can reach: literals,
 * comparisons, logic, lists, maps and fields, macros, strings, numbers, conversions, timestamps.
 * Tests that need protocol buffer messages, unsigned ints, bytes or optionals are out of scope.
 * What the library gets wrong today is listed by name in cel-conformance-known-failures.json; an
 * upgrade that changes any outcome (a new failure, or a listed one now passing) fails here, so
 * semantics never change silently (docs/adr/0026-cel-library.md).
 */
const SECTIONS = new Set([
  "basic",
  "comparisons",
  "conversions",
  "fields",
  "fp_math",
  "integer_math",
  "lists",
  "logic",
  "macros",
  "parse",
  "plumbing",
  "string",
  "timestamps",
]);
const OUT_OF_SCOPE =
  /TestAllTypes|NestedTestAllTypes|google\.protobuf|cel\.expr|\bproto\.|\buint\b|\d+u\b|\bbytes\b|b"|b'|\.\?|optional\.|\bdyn\(\{|type\(/;

type Case = { id: string; test: IncrementalTest };

function cases(): Case[] {
  const out: Case[] = [];
  for (const file of getConformanceSuite().suites) {
    if (!SECTIONS.has(file.name)) continue;
    for (const section of file.suites) {
      for (const test of section.tests) {
        const o = test.original;
        if (OUT_OF_SCOPE.test(o.expr) || o.container !== "" || o.disableMacros || o.checkOnly) continue;
        const r = o.resultMatcher;
        if (r.case !== "value" && r.case !== "evalError") continue;
        if (r.case === "value" && !representable(r.value)) continue;
        if (!Object.values(o.bindings).every((b) => b.kind.case === "value" && representable(b.kind.value)))
          continue;
        out.push({ id: `${file.name}/${section.name}/${test.name}`, test });
      }
    }
  }
  return out;
}

function representable(v: Value): boolean {
  switch (v.kind.case) {
    case "nullValue":
    case "boolValue":
    case "int64Value":
    case "doubleValue":
    case "stringValue":
      return true;
    case "listValue":
      return v.kind.value.values.every(representable);
    case "mapValue":
      return v.kind.value.entries.every(
        (e) => e.key && e.value && representable(e.key) && representable(e.value),
      );
    default:
      return false;
  }
}

function jsOf(v: Value): unknown {
  const k = v.kind;
  switch (k.case) {
    case "nullValue":
      return null;
    case "listValue":
      return k.value.values.map(jsOf);
    case "mapValue":
      return new Map(k.value.entries.map((e) => [jsOf(e.key as Value), jsOf(e.value as Value)]));
    default:
      return k.value;
  }
}

/** Equality as CEL defines it for the values compared here (NaN aside). */
function same(a: unknown, b: unknown): boolean {
  if (typeof a === "number" && typeof b === "number") return Object.is(a, b) || a === b;
  if (Array.isArray(a) && Array.isArray(b)) return a.length === b.length && a.every((x, i) => same(x, b[i]));
  const ma = asMap(a);
  const mb = asMap(b);
  if (ma && mb) {
    if (ma.size !== mb.size) return false;
    for (const [k, v] of ma) if (!mb.has(k) || !same(v, mb.get(k))) return false;
    return true;
  }
  return a === b;
}

function asMap(x: unknown): Map<unknown, unknown> | null {
  if (x instanceof Map) return x;
  if (
    x !== null &&
    typeof x === "object" &&
    !Array.isArray(x) &&
    Object.getPrototypeOf(x) === Object.prototype
  ) {
    return new Map(Object.entries(x));
  }
  return null;
}

// The settings of the policy's own environments (src/cel/env.ts).
const env = new Environment({ unlistedVariablesAreDyn: true, homogeneousAggregateLiterals: false });

function passes({ test }: Case): boolean {
  const o = test.original;
  const bindings: Record<string, unknown> = {};
  for (const [name, b] of Object.entries(o.bindings)) {
    if (b.kind.case === "value") bindings[name] = jsOf(b.kind.value);
  }
  let result: unknown;
  try {
    result = env.evaluate(o.expr, bindings);
  } catch {
    return o.resultMatcher.case === "evalError";
  }
  return o.resultMatcher.case === "value" && same(result, jsOf(o.resultMatcher.value));
}

describe("CEL conformance (the subset policy conditions use)", () => {
  const all = cases();
  const known = new Set<string>(knownFailures);

  it("runs a substantial part of the specification's tests", () => {
    expect(all.length).toBeGreaterThan(500);
  });

  it("every test passes except the known failures, and every known failure still fails", () => {
    const failing = all.filter((c) => !passes(c)).map((c) => c.id);
    if (process.env.CEL_CONFORMANCE_DUMP) console.log(JSON.stringify({ total: all.length, failing }));
    const unexpected = failing.filter((id) => !known.has(id));
    const fixed = [...known].filter((id) => !failing.includes(id) && all.some((c) => c.id === id));
    expect({ unexpected, fixed }).toEqual({ unexpected: [], fixed: [] });
  });
});
