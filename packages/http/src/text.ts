import { invalid } from "@gw/core";

/**
 * The one rule for strings that reach Postgres: no NUL character. Postgres `text` and `jsonb`
 * cannot hold U+0000, so a NUL that got through would turn a caller's mistake into a 500. Every
 * JSON body read by `readJson` and every free-text query parameter goes through here.
 */
export function hasNul(s: string): boolean {
  return s.includes("\u0000");
}

/**
 * Throws `invalid` (400) naming the first field whose value or key holds a NUL, anywhere in a
 * parsed JSON value. Iterative: a deeply nested body cannot overflow the stack.
 */
export function assertNoNul(value: unknown, root = ""): void {
  const stack: Array<[unknown, string]> = [[value, root]];
  while (stack.length > 0) {
    const [v, path] = stack.pop() as [unknown, string];
    if (typeof v === "string") {
      if (hasNul(v)) throw invalid(`${path || "request body"}: must not contain NUL characters`);
    } else if (Array.isArray(v)) {
      for (let i = v.length - 1; i >= 0; i--) stack.push([v[i], path ? `${path}.${i}` : String(i)]);
    } else if (typeof v === "object" && v !== null) {
      for (const [k, child] of Object.entries(v)) {
        if (hasNul(k))
          throw invalid(`${path || "request body"}: field names must not contain NUL characters`);
        stack.push([child, path ? `${path}.${k}` : k]);
      }
    }
  }
}
