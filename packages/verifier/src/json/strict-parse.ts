/** Byte range `[start, end)` of one value inside the parsed input. */
export type Span = { readonly start: number; readonly end: number };

export type StrictJson = {
  value: unknown;
  /** For a top-level object: each member's key → the exact byte span of its value. Else null. */
  members: ReadonlyMap<string, Span> | null;
};

/** Why the input is not strict JSON. The message is caller-safe: it never echoes the input. */
export class StrictJsonError extends Error {
  override readonly name = "StrictJsonError";
}

export type StrictJsonOptions = {
  /** Deepest nesting of objects and arrays accepted (the top-level container is depth 1). */
  maxDepth?: number;
};

export const DEFAULT_MAX_DEPTH = 128;

// ignoreBOM keeps a leading U+FEFF in the text, so the grammar below refuses it like any stray byte.
const decoder = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

/**
 * Parses RFC 8259 JSON strictly and keeps the byte span of every top-level member's value.
 *
 * Stricter than `JSON.parse` where ambiguity could be exploited: a duplicate object key at any depth
 * is refused (two parsers disagreeing on "first wins" vs "last wins" would let a caller show one
 * value to the verifier and another to the upstream); so are a lone surrogate escape and a number
 * that does not fit a double (I-JSON, RFC 7493, which RFC 8785 canonicalization requires), invalid
 * UTF-8, a byte-order mark, and nesting deeper than `maxDepth`. The grammar is checked by a
 * hand-written scanner over the bytes; the value is then built by `JSON.parse`, which accepts
 * everything the scanner accepts and builds `__proto__` keys as plain own properties.
 */
export function parseStrictJson(bytes: Uint8Array, opts: StrictJsonOptions = {}): StrictJson {
  let text: string;
  try {
    text = decoder.decode(bytes);
  } catch {
    throw new StrictJsonError("JSON must be valid UTF-8");
  }
  const scanner = new Scanner(bytes, opts.maxDepth ?? DEFAULT_MAX_DEPTH);
  const members = scanner.document();
  return { value: JSON.parse(text), members };
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const SIMPLE_ESCAPES = new Set([0x22, 0x5c, 0x2f, 0x62, 0x66, 0x6e, 0x72, 0x74]); // " \ / b f n r t

class Scanner {
  private i = 0;
  constructor(
    private readonly b: Uint8Array,
    private readonly maxDepth: number,
  ) {}

  document(): ReadonlyMap<string, Span> | null {
    this.ws();
    const top = this.b[this.i] === 0x7b ? new Map<string, Span>() : null;
    this.value(0, top);
    this.ws();
    if (this.i !== this.b.length) this.fail("unexpected data after the JSON value");
    return top;
  }

  private fail(why: string): never {
    throw new StrictJsonError(`invalid JSON: ${why}`);
  }

  private ws(): void {
    for (;;) {
      const c = this.b[this.i];
      if (c !== 0x20 && c !== 0x09 && c !== 0x0a && c !== 0x0d) return;
      this.i++;
    }
  }

  private value(depth: number, members: Map<string, Span> | null): void {
    const c = this.b[this.i];
    if (c === 0x7b) this.object(depth + 1, members);
    else if (c === 0x5b) this.array(depth + 1);
    else if (c === QUOTE) this.string();
    else if (c === 0x74) this.literal("true");
    else if (c === 0x66) this.literal("false");
    else if (c === 0x6e) this.literal("null");
    else if (c === 0x2d || (c !== undefined && c >= 0x30 && c <= 0x39)) this.number();
    else this.fail(c === undefined ? "unexpected end of input" : "unexpected character");
  }

  private enter(depth: number): void {
    if (depth > this.maxDepth) this.fail(`nesting deeper than ${this.maxDepth}`);
    this.i++;
    this.ws();
  }

  /** `members` is non-null only for the top-level object: it collects the members' value spans. */
  private object(depth: number, members: Map<string, Span> | null): void {
    this.enter(depth);
    if (this.b[this.i] === 0x7d) {
      this.i++;
      return;
    }
    const seen = new Set<string>();
    for (;;) {
      if (this.b[this.i] !== QUOTE) this.fail("expected an object key");
      const keyStart = this.i;
      this.string();
      const key = this.keyAt(keyStart, this.i);
      if (seen.has(key)) this.fail("duplicate object key");
      seen.add(key);
      this.ws();
      if (this.b[this.i] !== 0x3a) this.fail("expected ':'");
      this.i++;
      this.ws();
      const start = this.i;
      this.value(depth, null);
      members?.set(key, { start, end: this.i });
      this.ws();
      const c = this.b[this.i++];
      if (c === 0x7d) return;
      if (c !== 0x2c) this.fail("expected ',' or '}'");
      this.ws();
    }
  }

  private array(depth: number): void {
    this.enter(depth);
    if (this.b[this.i] === 0x5d) {
      this.i++;
      return;
    }
    for (;;) {
      this.value(depth, null);
      this.ws();
      const c = this.b[this.i++];
      if (c === 0x5d) return;
      if (c !== 0x2c) this.fail("expected ',' or ']'");
      this.ws();
    }
  }

  /** The decoded key, for duplicate detection: keys compare by value, so `"a"` equals `"\u0061"`. */
  private keyAt(start: number, end: number): string {
    const raw = decoder.decode(this.b.subarray(start + 1, end - 1));
    return raw.includes("\\") ? (JSON.parse(`"${raw}"`) as string) : raw;
  }

  private string(): void {
    this.i++; // opening quote
    for (;;) {
      const c = this.b[this.i];
      if (c === undefined) this.fail("unterminated string");
      if (c === QUOTE) {
        this.i++;
        return;
      }
      if (c < 0x20) this.fail("control character in string");
      if (c !== BACKSLASH) {
        this.i++;
        continue;
      }
      const e = this.b[this.i + 1];
      if (e !== undefined && SIMPLE_ESCAPES.has(e)) {
        this.i += 2;
        continue;
      }
      if (e !== 0x75) this.fail("invalid escape");
      const unit = this.hex4(this.i + 2);
      this.i += 6;
      if (unit >= 0xdc00 && unit <= 0xdfff) this.fail("lone surrogate");
      if (unit >= 0xd800 && unit <= 0xdbff) {
        // A high surrogate must be followed at once by an escaped low surrogate.
        if (this.b[this.i] !== BACKSLASH || this.b[this.i + 1] !== 0x75) this.fail("lone surrogate");
        const low = this.hex4(this.i + 2);
        if (low < 0xdc00 || low > 0xdfff) this.fail("lone surrogate");
        this.i += 6;
      }
    }
  }

  private hex4(at: number): number {
    let n = 0;
    for (let k = at; k < at + 4; k++) {
      const c = this.b[k];
      let d: number;
      if (c !== undefined && c >= 0x30 && c <= 0x39) d = c - 0x30;
      else if (c !== undefined && c >= 0x41 && c <= 0x46) d = c - 0x37;
      else if (c !== undefined && c >= 0x61 && c <= 0x66) d = c - 0x57;
      else this.fail("invalid \\u escape");
      n = n * 16 + d;
    }
    return n;
  }

  private digits(): number {
    const start = this.i;
    for (let c = this.b[this.i]; c !== undefined && c >= 0x30 && c <= 0x39; c = this.b[++this.i]);
    return this.i - start;
  }

  private number(): void {
    const start = this.i;
    if (this.b[this.i] === 0x2d) this.i++;
    if (this.b[this.i] === 0x30) this.i++;
    else if (this.digits() === 0) this.fail("invalid number");
    if (this.b[this.i] === 0x2e) {
      this.i++;
      if (this.digits() === 0) this.fail("invalid number");
    }
    if (this.b[this.i] === 0x65 || this.b[this.i] === 0x45) {
      this.i++;
      if (this.b[this.i] === 0x2b || this.b[this.i] === 0x2d) this.i++;
      if (this.digits() === 0) this.fail("invalid number");
    }
    // I-JSON: a number must be representable; 1e400 would become Infinity and break canonical form.
    const n = Number(decoder.decode(this.b.subarray(start, this.i)));
    if (!Number.isFinite(n)) this.fail("number out of range");
  }

  private literal(word: "true" | "false" | "null"): void {
    for (let k = 0; k < word.length; k++) {
      if (this.b[this.i + k] !== word.charCodeAt(k)) this.fail("invalid literal");
    }
    this.i += word.length;
  }
}
