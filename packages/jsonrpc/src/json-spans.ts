/**
 * Byte-exact surgery on JSON text that `JSON.parse` already accepted: find where a value sits, so
 * one member can be replaced and everything else kept verbatim (whitespace, number spellings,
 * escapes, key order). Only what the tool list filter needs: member spans of an object, element
 * spans of an array.
 */
export type Span = { start: number; end: number };

/** Spans of the members of the object at `at` (key → value span); null on a duplicate key. */
export function memberSpans(text: string, at: number): Map<string, Span> | null {
  const out = new Map<string, Span>();
  let i = ws(text, at);
  if (text[i] !== "{") return null;
  i = ws(text, i + 1);
  if (text[i] === "}") return out;
  for (;;) {
    const keyEnd = skipString(text, i);
    const key = JSON.parse(text.slice(i, keyEnd)) as string;
    i = ws(text, keyEnd);
    i = ws(text, i + 1); // the colon
    const end = skipValue(text, i);
    if (out.has(key)) return null;
    out.set(key, { start: i, end });
    i = ws(text, end);
    if (text[i] === "}") return out;
    i = ws(text, i + 1); // the comma
  }
}

/** Spans of the elements of the array at `at`. */
export function elementSpans(text: string, at: number): Span[] {
  const out: Span[] = [];
  let i = ws(text, at);
  i = ws(text, i + 1);
  if (text[i] === "]") return out;
  for (;;) {
    const end = skipValue(text, i);
    out.push({ start: i, end });
    i = ws(text, end);
    if (text[i] === "]") return out;
    i = ws(text, i + 1);
  }
}

function ws(text: string, i: number): number {
  let j = i;
  for (;;) {
    const c = text.charCodeAt(j);
    if (c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09) j++;
    else return j;
  }
}

/** One past the string literal at `i`: its next quote not escaped (an even run of backslashes before it). */
function skipString(text: string, i: number): number {
  let j = i + 1;
  for (;;) {
    const q = text.indexOf('"', j);
    if (q < 0) return text.length;
    let b = q;
    while (b > j && text.charCodeAt(b - 1) === 0x5c) b--;
    if ((q - b) % 2 === 0) return q + 1;
    j = q + 1;
  }
}

function skipValue(text: string, i: number): number {
  const c = text[i];
  if (c === '"') return skipString(text, i);
  if (c === "{" || c === "[") {
    const close = c === "{" ? "}" : "]";
    let j = ws(text, i + 1);
    if (text[j] === close) return j + 1;
    for (;;) {
      if (c === "{") {
        j = ws(text, skipString(text, j));
        j = ws(text, j + 1);
      }
      j = ws(text, skipValue(text, j));
      if (text[j] === close) return j + 1;
      j = ws(text, j + 1);
    }
  }
  // A number or a literal: up to the next delimiter.
  let j = i;
  while (j < text.length && !",}] \n\r\t".includes(text[j] as string)) j++;
  return j;
}
