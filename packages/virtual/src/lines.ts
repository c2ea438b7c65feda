/**
 * Splits a stream of newline-delimited JSON messages as chunks arrive (split anywhere, inside a
 * multi-byte character too); the same shape as the SSE parser's events, so a listen stream of
 * either kind is read alike.
 */
export class LineParser {
  #decoder = new TextDecoder("utf-8");
  #line = "";

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
    return parts.filter((p) => p.trim() !== "").map((data) => ({ data }));
  }
}

/**
 * The first line of a line-delimited body and the body from there on (that line included), so a
 * caller can look at the first message before deciding how to read the rest.
 */
export async function firstLine(
  body: AsyncIterable<Buffer>,
): Promise<{ first: string; rest: AsyncIterable<Buffer> }> {
  const iterator = body[Symbol.asyncIterator]();
  const held: Buffer[] = [];
  let ended = false;
  for (;;) {
    const next = await iterator.next();
    if (next.done) {
      ended = true;
      break;
    }
    held.push(next.value);
    if (next.value.includes(10)) break;
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
