// With the u flag a surrogate pair is one code point, so this matches only unpaired halves.
const LONE_SURROGATE = /\p{Cs}/u;

/**
 * RFC 8785 JSON Canonicalization Scheme (JCS) of a JSON value as `JSON.parse` builds it.
 *
 * JCS is defined on top of ECMAScript: numbers serialise as `Number.prototype.toString` does (which
 * `JSON.stringify` uses), strings with JSON.stringify's minimal escaping, object members sorted by
 * the UTF-16 code units of their keys (JavaScript's default string order), no whitespace. So two
 * spellings of one value (`1.0` / `1` / `1e0`, reordered keys, `"\u0061"` / `"a"`) canonicalise to
 * the same text and different values never do. Values outside I-JSON (non-finite numbers, lone
 * surrogates) and non-JSON values throw: the strict parser refuses them before they get here.
 */
export function canonicalJson(value: unknown): string {
  if (value === null) return "null";
  switch (typeof value) {
    case "boolean":
      return value ? "true" : "false";
    case "number":
      if (!Number.isFinite(value)) throw new TypeError("JCS: non-finite number");
      return JSON.stringify(value); // -0 → "0", as RFC 8785 §3.2.2.3 asks
    case "string":
      if (LONE_SURROGATE.test(value)) throw new TypeError("JCS: lone surrogate");
      return JSON.stringify(value);
    case "object": {
      if (Array.isArray(value)) return `[${value.map(canonicalJson).join(",")}]`;
      const obj = value as Record<string, unknown>;
      const keys = Object.keys(obj).sort();
      return `{${keys.map((k) => `${canonicalJson(k)}:${canonicalJson(obj[k])}`).join(",")}}`;
    }
    default:
      throw new TypeError(`JCS: ${typeof value} is not a JSON value`);
  }
}
