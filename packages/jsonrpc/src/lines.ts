import { FrameTooLargeError } from "./sse.ts";

/**
 * Splits a stream of newline-delimited JSON messages as chunks arrive (split anywhere, inside a
 * multi-byte character too); the same shape as the SSE parser's events, so a stream of either
 * kind is read alike. Blank lines are skipped; a last line without its newline still counts.
 * `maxLineBytes` bounds one line (UTF-8 bytes): past it `push` throws FrameTooLargeError.
 */
export class LineParser {
  #decoder = new TextDecoder("utf-8");
  #line = "";
  #max: number;

  constructor(opts: { maxLineBytes?: number } = {}) {
    this.#max = opts.maxLineBytes ?? Number.POSITIVE_INFINITY;
  }

  push(chunk: Uint8Array): Array<{ data: string }> {
    return this.#feed(this.#decoder.decode(chunk, { stream: true }));
  }

  end(): Array<{ data: string }> {
    const out = this.#feed(this.#decoder.decode());
    if (this.#line.trim() !== "") out.push({ data: this.#line });
    this.#line = "";
    return out;
  }

  #feed(text: string): Array<{ data: string }> {
    const parts = (this.#line + text).split("\n");
    this.#line = parts.pop() ?? "";
    if (this.#max !== Number.POSITIVE_INFINITY) {
      for (const p of [...parts, this.#line]) {
        if (Buffer.byteLength(p) > this.#max) throw new FrameTooLargeError(this.#max);
      }
    }
    return parts.filter((p) => p.trim() !== "").map((data) => ({ data }));
  }
}

/**
 * The first line of a line-delimited body and the body from there on (that line included), so a
 * caller can look at the first message before deciding how to read the rest. At most `maxBytes`
 * are held looking for the first line; a body whose first line is longer gives what was held.
 */
export async function firstLine(
  body: AsyncIterable<Buffer>,
  maxBytes = Number.POSITIVE_INFINITY,
): Promise<{ first: string; rest: AsyncIterable<Buffer> }> {
  const iterator = body[Symbol.asyncIterator]();
  const held: Buffer[] = [];
  let size = 0;
  let ended = false;
  for (;;) {
    const next = await iterator.next();
    if (next.done) {
      ended = true;
      break;
    }
    held.push(next.value);
    size += next.value.length;
    if (next.value.includes(10) || size > maxBytes) break;
  }
  const text = Buffer.concat(held).toString("utf8");
  const first = text.split("\n")[0] ?? "";
  async function* rest(): AsyncGenerator<Buffer> {
    yield* held;
    if (ended) return;
    for (;;) {
      const next = await iterator.next();
      if (next.done) return;
      yield next.value;
    }
  }
  return { first, rest: rest() };
}
