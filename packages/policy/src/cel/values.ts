import { CEL_LIMITS } from "./limits.ts";

/** A call's value that conditions cannot see: too deep, too large, or not what the variable is. */
export class ValueOutOfBounds extends Error {
  constructor(readonly why: string) {
    super(why);
  }
}

/**
 * A parsed JSON value (tool arguments, token claims) as a CEL value: objects become maps (never
 * plain objects: a key such as `__proto__` stays data), numbers are doubles (CEL's JSON mapping,
 * so `1 == 1.0` and comparisons mix; arithmetic wants `100.0`). Bounded by CEL_LIMITS so that no
 * condition can range over more than it was costed for; beyond → ValueOutOfBounds.
 */
export function celValueOf(json: unknown): unknown {
  const budget = { values: 0 };
  return convert(json, 0, budget);
}

function convert(x: unknown, depth: number, budget: { values: number }): unknown {
  if (++budget.values > CEL_LIMITS.maxValues) throw new ValueOutOfBounds("too many values");
  if (x === null || typeof x === "boolean") return x;
  if (typeof x === "number") return x;
  if (typeof x === "string") {
    if (x.length > CEL_LIMITS.maxStringLength) throw new ValueOutOfBounds("a string is too long");
    return x;
  }
  if (depth >= CEL_LIMITS.maxValueDepth) throw new ValueOutOfBounds("nested too deeply");
  if (Array.isArray(x)) {
    if (x.length > CEL_LIMITS.maxValueEntries) throw new ValueOutOfBounds("a list is too long");
    const out = new Array<unknown>(x.length);
    for (let i = 0; i < x.length; i++) out[i] = convert(x[i], depth + 1, budget);
    return out;
  }
  if (typeof x === "object") {
    const keys = Object.keys(x);
    if (keys.length > CEL_LIMITS.maxValueEntries) throw new ValueOutOfBounds("an object has too many keys");
    const out = new Map<string, unknown>();
    for (const k of keys) out.set(k, convert((x as Record<string, unknown>)[k], depth + 1, budget));
    return out;
  }
  // undefined, functions, bigints: not JSON.
  throw new ValueOutOfBounds("not a JSON value");
}

/** Tool arguments: a JSON object, else out of bounds; absent → an empty map. */
export function celArgumentsOf(args: unknown): Map<string, unknown> {
  if (args === undefined) return new Map();
  if (args === null || typeof args !== "object" || Array.isArray(args)) {
    throw new ValueOutOfBounds("arguments is not an object");
  }
  return celValueOf(args) as Map<string, unknown>;
}
